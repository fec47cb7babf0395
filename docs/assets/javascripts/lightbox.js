// Every figure opens full size (issue 19): a click, a tap, or Enter on a picture in a page (an image or one of the
// diagrams) shows it in an overlay at its own size (a diagram at twice its size), which scrolls where it is larger
// than the screen; a heatmap on a phone shows its two panels one under the other instead (see `panels`). A click on
// the background, the close button or Escape closes it. No library, nothing fetched: the overlay shows the image
// already loaded, or a copy of the inline SVG. A picture (a plotted figure: a heatmap, a loss curve) gets a visible
// cue under it, a button that says a tap enlarges it: on a phone such a figure is too small to read in the column,
// and nothing else would tell the reader that it opens. The button is the keyboard's way in for a picture; a
// diagram, which has no button, takes the focus itself.
(() => {
  const FIGURES = "article img, article figure.diagram svg";
  let open = null;

  function close() {
    if (!open) return;
    const { overlay, trigger } = open;
    open = null;
    overlay.remove();
    document.documentElement.classList.remove("lightbox-open");
    (trigger.lightboxCue || trigger).focus({ preventScroll: true });
  }

  function show(figure) {
    close();
    const copy = figure.cloneNode(true);
    copy.removeAttribute("tabindex");
    copy.classList.remove("lightbox-trigger");
    copy.removeAttribute("id");
    if (copy instanceof SVGElement) {
      // twice the drawing's own width: a phone scrolls it, a desktop shows it large
      const width = copy.viewBox.baseVal.width * 2;
      copy.setAttribute("width", width);
      copy.setAttribute("height", (width * copy.viewBox.baseVal.height) / copy.viewBox.baseVal.width);
      copy.querySelectorAll("[id]").forEach((e) => e.removeAttribute("id"));
    } else {
      copy.removeAttribute("width");
      copy.removeAttribute("height");
    }
    const overlay = document.createElement("div");
    overlay.className = "lightbox";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-modal", "true");
    overlay.setAttribute("aria-label", "그림 크게 보기");
    const button = document.createElement("button");
    button.className = "lightbox__close";
    button.setAttribute("aria-label", "닫기");
    button.textContent = "×";
    const frame = document.createElement("div");
    frame.className = "lightbox__figure";
    if (copy instanceof SVGElement) frame.append(copy);
    else {
      const parts = panels(figure, copy);
      frame.classList.toggle("lightbox__figure--panels", parts.length > 1);
      frame.append(...parts);
    }
    overlay.append(button, frame);
    overlay.addEventListener("click", (event) => {
      if (!frame.contains(event.target)) close();
    });
    button.addEventListener("click", close);
    document.body.append(overlay);
    document.documentElement.classList.add("lightbox-open");
    open = { overlay, trigger: figure };
    button.focus({ preventScroll: true });
  }

  // A picture at its own size (larger than in the column: on a phone the overlay scrolls). One twice as wide as it
  // is tall is two panels side by side (the attention heatmaps: additive left, dot product right); where the screen
  // is narrower than the picture, its panels are shown one under the other, each no wider than the screen, so that
  // a phone shows a heatmap's panel at about 0.6 of its size, without a sideways scroll, where the whole picture
  // would need 0.3.
  function panels(figure, copy) {
    const { naturalWidth: width, naturalHeight: height } = figure;
    const count = width >= 2 * height && window.innerWidth < width ? 2 : 1;
    const parts = [];
    for (let i = 0; i < count; i += 1) {
      const image = i === 0 ? copy : copy.cloneNode(true);
      if (i > 0) image.alt = ""; // the same picture again: its name is given once
      const panel = document.createElement("div");
      panel.className = "lightbox__panel";
      panel.style.width = `${width / count}px`;
      panel.style.aspectRatio = `${width / count} / ${height}`;
      image.style.width = `${count * 100}%`;
      image.style.marginLeft = `${-i * 100}%`;
      panel.append(image);
      parts.push(panel);
    }
    return parts;
  }

  function cue(figure) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "lightbox-cue";
    const icon = document.createElement("span");
    icon.setAttribute("aria-hidden", "true");
    icon.textContent = "⤢ ";
    button.append(icon, "눌러서 크게 보기");
    // the name starts with the visible words (a voice user says what they see) and adds which figure it opens
    button.setAttribute("aria-label", `눌러서 크게 보기: ${figure.getAttribute("alt") || "그림"}`);
    button.addEventListener("click", () => show(figure));
    figure.after(button);
    return button;
  }

  document$.subscribe(({ body }) => {
    for (const figure of body.querySelectorAll(FIGURES)) {
      figure.classList.add("lightbox-trigger");
      if (figure instanceof HTMLImageElement) {
        // the cue, not the picture, takes the focus: one stop per figure for a keyboard
        const button = cue(figure);
        figure.addEventListener("click", (event) => {
          event.preventDefault();
          show(figure);
        });
        figure.lightboxCue = button;
        continue;
      }
      figure.setAttribute("tabindex", "0");
      figure.addEventListener("click", (event) => {
        event.preventDefault();
        show(figure);
      });
      figure.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          show(figure);
        }
      });
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close();
  });
})();
