/* The site's one grey scale for values drawn as cells: the stepper (stepper.js), the live page's heatmaps
 * (live.js) and, in Python, the heatmap figures, which matplotlib draws with its "gray" colormap
 * (`ATTENTION_CMAP` in src/seq2seq_attention/translation/plotting.py; tests/site/test_stepper_browser.py checks
 * that the two agree).
 *
 * A share s in [0, 1] (an attention weight, or a value over the largest shown) becomes the grey level
 * floor(256 s), at most 255, which is how matplotlib looks s up in its 256-colour table: 0 is black, 1 is
 * white. The scale is the same in both themes (the figures are the same images in both), so a larger value
 * is always the lighter cell. The number on a cell is black or white, whichever stands out more (at worst
 * 4.6:1). The ends are also set as CSS custom properties (--grey-scale-low, --grey-scale-high) for legends.
 */
(function () {
  "use strict";

  const CMAP = "gray";
  const LOW = [0, 0, 0];
  const HIGH = [255, 255, 255];
  const N = 256;

  /* The level 0..255 of a share (clipped to [0, 1]; not a number: 0). */
  function level(share) {
    const s = Math.min(1, Math.max(0, Number.isFinite(share) ? share : 0));
    return Math.min(N - 1, Math.floor(s * N));
  }

  /* The cell's colour for a share, as rgb(). */
  function colour(share) {
    const v = level(share) / (N - 1);
    return "rgb(" + LOW.map((low, i) => Math.round(low + (HIGH[i] - low) * v)).join(", ") + ")";
  }

  function luminance(v) {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }

  /* The text colour on a cell of grey level `v`: black or white, whichever has the higher contrast. */
  function ink(v) {
    const l = luminance(v);
    return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
  }

  /* A legend: the low end's label, the bar, the high end's label. */
  function legend(low, high, note) {
    const box = document.createElement("p");
    box.className = "grey-legend";
    const bar = document.createElement("span");
    bar.className = "grey-legend__bar";
    bar.setAttribute("aria-hidden", "true");
    const parts = [low, bar, high, note].filter((p) => p !== undefined && p !== null);
    for (const part of parts) {
      const span = typeof part === "string" ? document.createElement("span") : part;
      if (typeof part === "string") span.textContent = part;
      box.append(span);
    }
    return box;
  }

  const root = document.documentElement;
  root.style.setProperty("--grey-scale-low", "rgb(" + LOW.join(", ") + ")");
  root.style.setProperty("--grey-scale-high", "rgb(" + HIGH.join(", ") + ")");

  window.greyScale = Object.freeze({ CMAP, LOW, HIGH, N, level, colour, ink, legend });
})();
