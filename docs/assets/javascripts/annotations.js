// Material's code annotations (content.code.annotate; the errata page has them): the number that opens a note is a
// link whose only content is drawn by CSS (`content: attr(data-md-annotation-id)`), so it has no name of its own
// (axe-core's link-name, tests/site/test_accessibility.py). Each one is named "주석 N" as soon as Material adds it.
(() => {
  function name() {
    for (const link of document.querySelectorAll("a.md-annotation__index:not([aria-label])")) {
      const number = link.querySelector("[data-md-annotation-id]")?.dataset.mdAnnotationId;
      if (number) link.setAttribute("aria-label", `주석 ${number}`);
    }
  }
  name();
  new MutationObserver(name).observe(document.body, { childList: true, subtree: true });
})();
