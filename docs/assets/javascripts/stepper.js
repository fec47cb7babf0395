/* Step through an excerpt like a debugger: the tensors each line made in one recorded run.
 *
 * hooks/stepper.py marks each excerpt whose section was traced (data-stepper="src/...py:section") and
 * writes the page's part of the trace (scripts/record_traces.py) into the page as JSON. For each marked
 * code block this adds two buttons (previous, next) and a panel: the highlighted line's name, shape
 * with its letters and sizes, and values (a grey-scale table, rounded to 4 decimals). Keys, with the
 * focus on the buttons or on the code: ArrowRight or j for the next line, ArrowLeft or k for the
 * previous one, Home and End for the first and the last. The panel is an aria-live region.
 */
(function () {
  "use strict";

  const DIGITS = 4;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /* A float rounded to 4 decimals (JSON reads 0.0 as 0: the dtype says which it is), an integer as it is. */
  function number(value, isFloat = true) {
    if (typeof value === "string") return value; // nan, inf
    if (!isFloat) return String(value);
    const text = value.toFixed(DIGITS);
    return text === "-0.0000" ? "0.0000" : text;
  }

  function shapeText(value) {
    const sizes = value.dims || value.shape.map(String);
    return "(" + sizes.join(", ") + ")";
  }

  /* A cell shaded by |value| / the largest |value| shown, in the text colour over the background (so in either
     theme). No middle grey, on which neither text colour would be legible: up to half the largest, 0-25 % of the
     text colour under the text; above, 72-95 % under text in the background colour. */
  function shaded(tag, value, scale, label, isFloat = true) {
    const share = scale > 0 && typeof value === "number" ? Math.abs(value) / scale : 0;
    const dark = share > 0.5;
    const cell = el(tag, { class: "stepper__cell" + (dark ? " stepper__cell--dark" : "") }, label || number(value, isFloat));
    const shade = dark ? 72 + (share - 0.5) * 46 : share * 50;
    cell.style.setProperty("--stepper-shade", shade.toFixed(1) + "%");
    return cell;
  }

  function scaleOf(rows) {
    let scale = 0;
    for (const row of rows) for (const v of row) if (typeof v === "number") scale = Math.max(scale, Math.abs(v));
    return scale;
  }

  /* A row of a 2-D slice: a decoding step over T is t=1, t=2, ... (as in the top-5 table); any other row, its index. */
  function rowLabel(value, i) {
    const letter = value.dims && value.dims.length >= 2 ? value.dims[value.dims.length - 2].split("=")[0] : "";
    return letter === "T" ? "t=" + (i + 1) : String(i);
  }

  function valuesTable(value) {
    const vector = !Array.isArray(value.values[0]);
    const rows = vector ? [value.values] : value.values;
    const words = value.words ? (vector ? [value.words] : value.words) : null;
    const isFloat = value.dtype.startsWith("float") || value.dtype.startsWith("bfloat");
    const scale = isFloat ? scaleOf(rows) : 0;
    const width = rows[0].length;
    const head = el("tr", {}, el("th", { scope: "col" }, vector ? "" : "행"),
      ...Array.from({ length: width }, (_, j) => el("th", { scope: "col" }, value.cols ? value.cols[j] : String(j))));
    const body = rows.map((row, i) => el("tr", {},
      el("th", { scope: "row" }, vector ? "값" : (value.rows ? value.rows[i] : rowLabel(value, i))),
      ...row.map((v, j) => shaded("td", v, scale, words ? number(v, isFloat) + " " + words[i][j] : null, isFloat))));
    return el("div", { class: "stepper__scroll" },
      el("table", { class: "stepper__table" }, el("thead", {}, head), el("tbody", {}, body)));
  }

  function topTable(value) {
    const vector = !Array.isArray(value.top[0][0]);
    const rows = vector ? [value.top] : value.top;
    const scale = scaleOf(rows.map((row) => row.map((pair) => pair[1])));
    const body = rows.map((row, i) => el("tr", {},
      el("th", { scope: "row" }, vector ? "" : "t=" + (i + 1)),
      ...row.map(([word, v]) => shaded("td", v, scale, word + " " + number(v)))));
    return el("div", { class: "stepper__scroll" }, el("table", { class: "stepper__table" }, el("tbody", {}, body)));
  }

  function notes(value) {
    const parts = [];
    if (value.slice) parts.push("표시: " + value.name + value.slice);
    if (value.rows_shown) parts.push("처음 " + value.rows_shown + "행만");
    if (value.cols_shown) {
      const last = value.dims ? value.dims[value.dims.length - 1] : String(value.shape[value.shape.length - 1]);
      parts.push("너무 커서 " + last + " 중 처음 " + value.cols_shown + "개만");
    }
    if (value.top) {
      const last = value.dims ? value.dims[value.dims.length - 1] : String(value.shape[value.shape.length - 1]);
      parts.push(last + " 중 값이 가장 큰 " + (Array.isArray(value.top[0][0]) ? value.top[0].length : value.top.length) + "개와 그 단어");
    }
    return parts.length ? el("p", { class: "stepper__note" }, parts.join(", ") + ".") : null;
  }

  function showValue(value) {
    const name = el("code", { class: "stepper__name" }, value.name === "return" ? "return" : value.name);
    if (value.kind === "tensor") {
      const header = el("p", { class: "stepper__head" }, name, " ",
        el("span", { class: "stepper__shape" }, shapeText(value)), " ", el("span", { class: "stepper__dtype" }, value.dtype));
      let body = null;
      if ("value" in value) body = el("p", { class: "stepper__scalar" }, number(value.value, value.dtype.includes("float")));
      else if (value.top) body = topTable(value);
      else if (value.values) body = valuesTable(value);
      return el("div", { class: "stepper__value" }, header, body, notes(value));
    }
    if (value.kind === "module") {
      const params = Object.entries(value.params).map(([key, shape]) => key + " (" + shape.join(", ") + ")").join(", ");
      return el("div", { class: "stepper__value" },
        el("p", { class: "stepper__head" }, name, " ", el("span", { class: "stepper__shape" }, value.repr)),
        params ? el("p", { class: "stepper__note" }, "매개변수: " + params + " (값은 학습된 가중치로 곧 바뀝니다).") : null);
    }
    if (value.kind === "object") {
      const fields = Object.entries(value.fields)
        .map(([key, v]) => key + " " + (Array.isArray(v) ? "(" + v.join(", ") + ")" : v)).join(", ");
      return el("div", { class: "stepper__value" },
        el("p", { class: "stepper__head" }, name, " ", el("span", { class: "stepper__shape" }, value.type)),
        el("p", { class: "stepper__note" }, fields));
    }
    return el("div", { class: "stepper__value" },
      el("p", { class: "stepper__head" }, name, " = ", el("code", { class: "stepper__repr" }, value.repr)));
  }

  /* The code block's lines, as their text without indentation. */
  function codeLines(block) {
    return [...block.querySelectorAll("pre > code > span[id^='__span-']")];
  }

  function lineText(span) {
    return span.textContent.replace(/\n$/, "").trim();
  }

  /* Each recorded step with the indices of its lines in the block (matched by text; the nearest to `at` wins). */
  function placeSteps(texts, steps) {
    const placed = [];
    for (const step of steps) {
      let best = null;
      for (let k = 0; k + step.text.length <= texts.length; k++) {
        if (step.text.every((t, n) => texts[k + n] === t) && (best === null || Math.abs(k - step.at) < Math.abs(best - step.at))) {
          best = k;
        }
      }
      if (best === null) {
        console.warn("stepper: a traced line is not in the excerpt (re-record the trace):", step.text[0]);
        continue;
      }
      placed.push({ step, lines: step.text.map((_, n) => best + n) });
    }
    return placed;
  }

  function attach(block, data) {
    const ref = block.getAttribute("data-stepper");
    const steps = data.sections[ref];
    const spans = codeLines(block);
    if (!steps || !spans.length) return;
    const placed = placeSteps(spans.map(lineText), steps);
    if (!placed.length) return;
    const sentence = data.sentence;
    let at = -1;

    const previous = el("button", { type: "button", class: "md-button stepper__button", "data-move": "-1",
      "aria-keyshortcuts": "ArrowLeft k", title: "이전 줄 (← 또는 k)" }, "◀ 이전 줄");
    const next = el("button", { type: "button", class: "md-button stepper__button", "data-move": "1",
      "aria-keyshortcuts": "ArrowRight j", title: "다음 줄 (→ 또는 j)" }, "다음 줄 ▶");
    const position = el("span", { class: "stepper__position" }, "0 / " + placed.length);
    const panel = el("div", { class: "stepper__panel", "aria-live": "polite", "aria-atomic": "true" });
    const intro = el("p", { class: "stepper__intro" },
      "기록된 실행: 패키지의 바다나우 번역기, 평가용(test) 문장 «" + sentence.source + "» → «" + sentence.translation +
      "», 첫 디코딩 스텝. ‘다음 줄’(→ 또는 j)을 누르면 실행된 줄이 차례로 강조되고, 그 줄이 만든 Tensor가 여기에 나옵니다.");
    panel.append(intro);
    const box = el("div", { class: "stepper", role: "group", "aria-label": "실행 따라가기: " + ref, "data-ref": ref },
      el("div", { class: "stepper__bar" }, previous, next, position), panel);
    block.after(box);

    function show(index) {
      at = Math.max(-1, Math.min(placed.length - 1, index));
      for (const span of spans) span.classList.remove("stepper-current");
      // aria-disabled, not disabled: a disabled button would drop the keyboard focus at either end
      previous.setAttribute("aria-disabled", String(at <= 0));
      next.setAttribute("aria-disabled", String(at >= placed.length - 1));
      position.textContent = (at + 1) + " / " + placed.length;
      panel.replaceChildren();
      if (at < 0) {
        panel.append(intro);
        return;
      }
      const { step, lines } = placed[at];
      for (const n of lines) spans[n].classList.add("stepper-current");
      box.setAttribute("data-line", String(lines[0] + 1));
      const first = spans[lines[0]];
      const pre = block.querySelector("pre");
      if (pre && first) {
        const top = first.offsetTop, bottom = top + first.offsetHeight;
        if (top < pre.scrollTop || bottom > pre.scrollTop + pre.clientHeight) pre.scrollTop = Math.max(0, top - pre.clientHeight / 3);
      }
      panel.append(el("p", { class: "stepper__line" }, (lines[0] + 1) + "번째 줄: ", el("code", {}, step.text.join(" "))));
      if (!step.values.length) {
        panel.append(el("p", { class: "stepper__note" }, "이 줄은 새 값을 묶지 않습니다 (조건이나 호출). 다음 줄에서 실행이 어디로 갔는지 보세요."));
      }
      for (const value of step.values) panel.append(showValue(value));
    }

    function onKey(event) {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const moves = { ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1 };
      if (event.key in moves) show(Math.max(0, at + moves[event.key]));
      else if (event.key === "Home") show(0);
      else if (event.key === "End") show(placed.length - 1);
      else return;
      event.preventDefault();
    }

    previous.addEventListener("click", () => show(Math.max(0, at - 1)));
    next.addEventListener("click", () => show(at + 1));
    box.addEventListener("keydown", onKey);
    const pre = block.querySelector("pre");
    if (pre) {
      if (!pre.hasAttribute("tabindex")) pre.setAttribute("tabindex", "0");
      pre.addEventListener("keydown", onKey);
    }
    show(-1);
  }

  function start() {
    const script = document.getElementById("__stepper-trace");
    if (!script) return;
    let data;
    try {
      data = JSON.parse(script.textContent);
    } catch (error) {
      console.warn("stepper: the trace is not JSON", error);
      return;
    }
    for (const block of document.querySelectorAll("[data-stepper]")) {
      if (!block.nextElementSibling || !block.nextElementSibling.classList.contains("stepper")) attach(block, data);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
