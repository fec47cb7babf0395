// Render arithmatex's \( \) and \[ \] spans with the vendored KaTeX, on every page load
// (Material's instant navigation swaps pages without a full reload, hence document$).
document$.subscribe(({ body }) => {
  renderMathInElement(body, {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display: true },
    ],
  });
});
