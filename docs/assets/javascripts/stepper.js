/* Step through an excerpt like a debugger: the tensors each line made in recorded runs of the translator.
 *
 * hooks/stepper.py marks each excerpt whose section a run holds (data-stepper="src/...py:section") and writes
 * the page's part of the trace (scripts/record_traces.py) into the page as JSON. For each marked code block this
 * adds a switch between the runs that hold it (one sentence, a padded batch, the loop fed its own guesses, a
 * training step, beam search), buttons for the previous and next line and for the previous and next pass
 * (decoding step t), and a panel: the pass (t, the token fed, the word chosen), the highlighted line's names,
 * shapes with their letters and sizes, and values (a table rounded to 4 decimals, an exact 0 reading 0, coloured
 * by what it holds: attention weights on the site's 0-1 grey scale, greyscale.js, like the heatmaps and the live
 * page; signed values on a diverging blue-white-red scale; see `modeOf`; its legend says which). Keys, with the focus on the buttons or on the code: ArrowRight or j for the
 * next line, ArrowLeft or k for the previous one, Home and End for the first and the last, ] and [ for the same
 * line in the next and the previous pass. The panel is an aria-live region. A link opens the run's sentence on
 * the live page; the page's fragment (#s=<sentence>&t=<t>, as the live page links back) opens that pass.
 */
(function () {
  "use strict";

  const DIGITS = 4;
  const HUGE = 1e30; // a masked score (the most negative float) is no part of the scale

  const RUNS = {
    sentence: (run) => "평가용 문장 «" + run.sentences[0].source + "» → «" + run.sentences[0].translation +
      "»를 탐욕적으로 번역한 실행입니다. 스텝 t마다 직전에 고른 단어가 다음 입력이 됩니다. " +
      "t = 0은 디코딩 전(체크포인트를 읽고 어텐션 모듈을 첫 쿼리로 한 번 불러 본 부분)입니다.",
    batch: (run) => "길이가 다른 평가용 문장 " + run.sentences.map((s) => "«" + s.source + "»(S = " +
      s.source_tokens.length + ")").join("와 ") + "을 한 배치로 번역한 실행입니다. 짧은 문장은 <pad>로 채워지고, " +
      "마스크 때문에 그 자리의 어텐션 가중치는 정확히 0입니다. 표의 행 b = 0, 1이 두 문장입니다.",
    free: () => "훈련 루프를 교사 강요 비율 0으로 돌린 실행입니다. 스텝마다 정답 대신 직전 스텝에서 모델이 " +
      "고른 단어(argmax)를 입력으로 넣습니다.",
    training: (run) => {
      const [own, ...others] = run.training_step.calls;
      const ratio = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));
      return "훈련 스텝 하나입니다. 에폭 " + own.epoch + "의 교사 강요 비율은 " + ratio(own.result) +
        "(체크포인트의 일정 " + own.schedule + ")이라 스텝마다 정답 단어를 입력으로 넣습니다. 순전파 뒤 토큰별 손실을 구하고 " +
        "역전파합니다. teacher_forcing_at의 다른 갈래도 보이도록 " + others.map((c) => c.schedule + "(k = " + c.k +
        ", 에폭 " + c.epoch + ") → " + number(c.result)).join(", ") + "도 한 번 부릅니다.";
    },
    beam: (run) => "빔 서치(k = " + run.beam_size + ")로 «" + run.sentences[0].source + "»를 번역한 실행입니다. " +
      "스텝마다 살아남은 빔의 행을 골라 상태를 복사하고 다시 줄 세웁니다(select).",
    luong: (run) => "루옹 디코더에 input feeding을 켠 모델(점수 " + run.model.score + ", H = " + run.model.hidden_size +
      ", 패키지 번역기와 같은 어휘)로 «" + run.sentences[0].source + "»를 탐욕적으로 번역한 실행입니다. 이 모델은 학습하지 " +
      "않았고(시드 0으로 정한 처음 가중치) 번역은 뜻이 없습니다. 보여 주는 것은 흐름입니다: 스텝마다 GRU 입력이 토큰의 " +
      "임베딩과 앞 스텝의 출력 벡터 state.feed를 이어 붙인 (B, 1, 2H)이고, 이번 스텝의 attentional이 다음 스텝의 feed가 " +
      "됩니다. t = 1의 feed는 0입니다.",
  };

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

  /* A float to 4 decimals; an exact 0 as 0 (a masked weight), a tiny or a huge one in powers of ten, so that
     nothing that is not 0 reads 0. An integer as it is. */
  function number(value, isFloat = true) {
    if (typeof value === "string") return value; // nan, inf
    if (typeof value === "boolean") return value ? "True" : "False";
    if (!isFloat) return String(value);
    if (value === 0) return "0";
    if (Math.abs(value) >= 1e6) return value.toExponential(2);
    if (Math.abs(value) < 0.5 * 10 ** -DIGITS) return value.toExponential(1);
    return value.toFixed(DIGITS);
  }

  function shapeText(value) {
    const sizes = value.dims || value.shape.map(String);
    return "(" + sizes.join(", ") + ")";
  }

  /* How a table's numbers become colours, and what its legend says (`legend`):
     - "weights": attention weights, on the 0-1 grey scale of the heatmap figures and the live page (0 black, 1 white);
     - "log": log-probabilities, by their place between the smallest and the largest shown (likelier, lighter);
     - "signed": a table that holds a negative number, on a diverging scale: blue below 0, white at 0, red above,
       as deep as |value| over the largest |value| shown, so that -1 and +1 never look alike;
     - "magnitude": other numbers (none negative), on the grey scale by value over the largest shown;
     - a bool: False black, True white. */
  function modeOf(value) {
    if (value.scale) return value.scale;
    const numbers = value.top ? value.top.flat(Infinity).filter((v) => typeof v === "number") : (value.values || []).flat();
    return numbers.some((v) => typeof v === "number" && v < 0 && Math.abs(v) < HUGE) ? "signed" : "magnitude";
  }

  /* The colour share of each value: in [0, 1] (the grey scale), or in [-1, 1] for "signed". */
  function scaleOf(rows, mode) {
    const finite = rows.flat().filter((v) => typeof v === "number" && Math.abs(v) < HUGE);
    if (mode === "log") {
      const low = Math.min(...finite), high = Math.max(...finite);
      return (v) => (typeof v !== "number" || Math.abs(v) >= HUGE ? 0 : high > low ? (v - low) / (high - low) : 1);
    }
    if (mode === "weights") return (v) => (typeof v === "number" ? v : 0);
    const top = Math.max(0, ...finite.map(Math.abs));
    return (v) => {
      if (typeof v === "boolean") return v ? 1 : 0;
      if (typeof v !== "number" || Math.abs(v) >= HUGE || top === 0) return 0;
      return mode === "signed" ? v / top : Math.abs(v) / top;
    };
  }

  const NEGATIVE = [33, 102, 172]; // the ends of the diverging scale (matplotlib's RdBu_r: blue, white, red)
  const POSITIVE = [178, 24, 43];
  const ZERO = [255, 255, 255];

  /* The colour of a signed share in [-1, 1]: from white at 0 towards blue (negative) or red (positive). */
  function diverging(share) {
    const s = Math.max(-1, Math.min(1, share));
    const end = s < 0 ? NEGATIVE : POSITIVE;
    return ZERO.map((zero, i) => Math.round(zero + (end[i] - zero) * Math.abs(s)));
  }

  function inkOn(rgb) {
    const l = rgb.map((c) => { const x = c / 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    const y = 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
    return (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) ? "#000" : "#fff";
  }

  function shaded(tag, share, label, mode) {
    const cell = el(tag, { class: "stepper__cell" }, label);
    if (mode === "signed") {
      const rgb = diverging(share);
      cell.style.backgroundColor = "rgb(" + rgb.join(", ") + ")";
      cell.style.color = inkOn(rgb);
      cell.dataset.signed = share.toFixed(4);
      return cell;
    }
    const grey = window.greyScale;
    if (grey) {
      const level = grey.level(share);
      cell.style.backgroundColor = grey.colour(share);
      cell.style.color = grey.ink(level);
      cell.dataset.level = String(level);
    }
    return cell;
  }

  /* A row of a 2-D slice: a decoding step over T is t=1, t=2, ...; a sentence of the batch b=0, b=1; else its index. */
  function rowLabel(value, i) {
    const letter = value.dims && value.dims.length >= 2 ? value.dims[value.dims.length - 2].split("=")[0] : "";
    if (value.slice) { // the row dimension is the first ":" of the slice
      const kept = value.slice.slice(1, -1).split(", ").concat(Array(value.shape.length).fill(":"));
      const row = kept.indexOf(":");
      const name = value.dims ? value.dims[row].split("=")[0] : "";
      if (name === "B") return "b=" + i;
      if (name === "T") return "t=" + (i + 1);
    }
    if (letter === "B") return "b=" + i;
    return letter === "T" ? "t=" + (i + 1) : String(i);
  }

  function scroller(table) {
    return el("div", { class: "stepper__scroll", tabindex: "0", role: "region", "aria-label": "값 표 (옆으로 밀 수 있음)" }, table);
  }

  function valuesTable(value) {
    const vector = !Array.isArray(value.values[0]);
    const rows = vector ? [value.values] : value.values;
    const words = value.words ? (vector ? [value.words] : value.words) : null;
    const isFloat = value.dtype.startsWith("float") || value.dtype.startsWith("bfloat");
    const mode = modeOf(value);
    const shade = scaleOf(rows, mode);
    const width = rows[0].length;
    const head = el("tr", {}, el("th", { scope: "col" }, vector ? "" : "행"),
      ...Array.from({ length: width }, (_, j) => el("th", { scope: "col" }, value.cols ? value.cols[j] : String(j))));
    const body = rows.map((row, i) => el("tr", {},
      el("th", { scope: "row" }, vector ? "값" : (value.rows ? value.rows[i] : rowLabel(value, i))),
      ...row.map((v, j) => {
        const label = number(v, isFloat) + (words ? " " + words[i][j] : "");
        return isFloat || typeof v === "boolean" ? shaded("td", shade(v), label, mode) : el("td", { class: "stepper__plain" }, label);
      })));
    return scroller(el("table", { class: "stepper__table" }, el("thead", {}, head), el("tbody", {}, body)));
  }

  function topTable(value) {
    const vector = !Array.isArray(value.top[0][0]);
    const rows = vector ? [value.top] : value.top;
    const mode = modeOf(value);
    const shade = scaleOf(rows.map((row) => row.map((pair) => pair[1])), mode);
    const body = rows.map((row, i) => el("tr", {},
      el("th", { scope: "row" }, vector ? "" : "t=" + (i + 1)),
      ...row.map(([word, v]) => shaded("td", shade(v), word + " " + number(v), mode))));
    return scroller(el("table", { class: "stepper__table" }, el("tbody", {}, body)));
  }

  /* The legend under a table: what its colours mean, true for that table (see `modeOf`). */
  function legend(value) {
    if (!window.greyScale || !(value.values || value.top)) return null;
    const isFloat = value.dtype.startsWith("float") || value.dtype.startsWith("bfloat");
    if (value.dtype === "bool") return window.greyScale.legend("False", "True", "마스크: 흰색이 실제 토큰");
    if (!isFloat) return null;
    const mode = modeOf(value);
    if (mode === "log") return window.greyScale.legend("덜 가능", "더 가능", "로그 확률: 흰색일수록 가능성이 큼");
    if (mode === "weights") {
      return window.greyScale.legend("0", "1", "어텐션 가중치: 0부터 1까지 한 눈금, 히트맵 그림과 라이브 페이지와 같음");
    }
    if (mode === "signed") {
      const box = window.greyScale.legend("−최대 |값|", "+최대 |값|",
        "부호 있는 값: 파랑은 음수, 흰색은 0, 빨강은 양수 (이 표에서 |값|이 가장 큰 것이 가장 진함)");
      box.classList.add("grey-legend--signed");
      return box;
    }
    return window.greyScale.legend("0", "이 표의 최댓값", "회색 눈금: 이 표에서 가장 큰 값이 흰색");
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
    const name = el("code", { class: "stepper__name" }, value.name);
    if (value.kind === "tensor") {
      const header = el("p", { class: "stepper__head" }, name, " ",
        el("span", { class: "stepper__shape" }, shapeText(value)), " ", el("span", { class: "stepper__dtype" }, value.dtype));
      let body = null;
      if ("value" in value) body = el("p", { class: "stepper__scalar" }, number(value.value, value.dtype.includes("float")));
      else if (value.top) body = topTable(value);
      else if (value.values) body = valuesTable(value);
      return el("div", { class: "stepper__value" }, header, body, body && body.tagName !== "P" ? legend(value) : null, notes(value));
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

  /* The block's line indices of each recorded line (matched by text; the nearest to `at` wins), or null. */
  function placeLines(texts, lines) {
    return lines.map((line) => {
      let best = null;
      for (let k = 0; k + line.text.length <= texts.length; k++) {
        if (line.text.every((t, n) => texts[k + n] === t) && (best === null || Math.abs(k - line.at) < Math.abs(best - line.at))) {
          best = k;
        }
      }
      if (best === null) console.warn("stepper: a traced line is not in the excerpt (re-record the trace):", line.text[0]);
      return best === null ? null : line.text.map((_, n) => best + n);
    });
  }

  /* Which scroll boxes are wider than they show: they get a cue (stepper.css). */
  function markOverflow(root) {
    for (const box of root.querySelectorAll(".stepper__scroll")) {
      const overflow = String(box.scrollWidth > box.clientWidth + 1);
      if (box.dataset.overflow !== overflow) box.dataset.overflow = overflow;
    }
  }

  function fragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    const t = Number(params.get("t"));
    return params.has("s") ? { sentence: params.get("s"), t: Number.isInteger(t) ? t : null } : null;
  }

  function liveLink(data, sentence, t) {
    if (!data.live) return null;
    const params = new URLSearchParams({ s: sentence.source });
    if (t >= 1) params.set("step.bahdanau", String(t));
    return el("a", { class: "stepper__live", href: data.live + "#" + params }, "«" + sentence.source + "» 라이브 페이지에서 열기" +
      (t >= 1 ? " (t = " + t + ")" : ""));
  }

  const described = new Set();
  let introduced = false;

  function attach(block, data) {
    const ref = block.getAttribute("data-stepper");
    const spans = codeLines(block);
    const names = Object.keys(data.runs).filter((name) => data.runs[name].sections[ref]);
    if (!names.length || !spans.length) return;
    const texts = spans.map(lineText);
    const runs = {};
    for (const name of names) {
      const section = data.runs[name].sections[ref];
      const places = placeLines(texts, section.lines);
      const placed = section.steps.filter((step) => places[step.line]).map((step) => ({ step, lines: places[step.line] }));
      if (placed.length) runs[name] = { run: data.runs[name], placed, passes: [...new Set(placed.map((p) => p.step.t))] };
    }
    if (!Object.keys(runs).length) return;
    // a run's description and the how-to line are read once per page: the first stepper that shows a run says it
    // whole, later ones name the run's sentences and point up
    const describes = new Set(Object.keys(runs).filter((key) => !described.has(key)));
    describes.forEach((key) => described.add(key));
    const introduces = !introduced;
    introduced = true;
    let name = Object.keys(runs)[0];
    let at = -1;

    const choose = el("select", { class: "stepper__run", "aria-label": "기록된 실행 고르기" },
      ...Object.keys(runs).map((key) => el("option", { value: key }, runs[key].run.title)));
    const button = (move, text, title, keys, kind) => el("button", { type: "button", class: "md-button stepper__button",
      "data-move": move, "data-kind": kind, "aria-keyshortcuts": keys, title }, text);
    const previous = button("-1", "◀ 이전 줄", "이전 줄 (← 또는 k)", "ArrowLeft k", "line");
    const next = button("1", "다음 줄 ▶", "다음 줄 (→ 또는 j)", "ArrowRight j", "line");
    const earlier = button("-1", "◀ 이전 스텝", "이전 디코딩 스텝의 같은 줄 ([)", "[", "pass");
    const later = button("1", "다음 스텝 ▶", "다음 디코딩 스텝의 같은 줄 (])", "]", "pass");
    const position = el("span", { class: "stepper__position" });
    const passPosition = el("span", { class: "stepper__pass" });
    const passBar = el("div", { class: "stepper__bar" }, earlier, later, passPosition);
    const about = el("p", { class: "stepper__about" });
    const summary = el("div", { class: "stepper__summary" });
    const panel = el("div", { class: "stepper__panel", "aria-live": "polite", "aria-atomic": "true" });
    const box = el("div", { class: "stepper", role: "group", "aria-label": "실행 따라가기: " + ref, "data-ref": ref },
      el("div", { class: "stepper__bar" }, el("label", { class: "stepper__label" }, "실행 ", choose)),
      el("div", { class: "stepper__bar" }, previous, next, position),
      passBar,
      about, summary, panel);
    block.after(box);

    const current = () => runs[name];
    const tOf = (index) => (index >= 0 ? current().placed[index].step.t : null);

    function describePass(run, t) {
      if (t === null) return null;
      if (t === 0) return el("p", { class: "stepper__passinfo" }, "t = 0: 디코딩 전");
      const one = (run.passes || []).find((p) => p.t === t);
      const parts = [];
      if (one && one.fed) {
        run.sentences.forEach((_, b) => {
          let text = (run.sentences.length > 1 ? "b=" + b + ": " : "") + "입력 «" + one.fed[b] + "» → 고른 단어 «" + one.chosen[b] + "»";
          if (one.target) text += ", 정답 «" + one.target[b] + "», 손실 " + number(one.loss[b]);
          parts.push(text);
        });
      }
      return el("p", { class: "stepper__passinfo" }, "디코딩 스텝 t = " + t + (parts.length ? ": " + parts.join("; ") : ""));
    }

    function drawAbout() {
      const { run } = current();
      const t = tOf(at);
      const text = describes.has(name) ? (RUNS[name] || (() => run.title))(run) :
        run.title + ": " + run.sentences.map((s) => "«" + s.source + "»").join(", ") + " (설명은 이 페이지의 첫 실행 따라가기에).";
      about.replaceChildren(text, " ",
        ...(run.model ? [] : run.sentences.map((s) => liveLink(data, s, t)).filter(Boolean).flatMap((a) => [a, " "])));
      summary.replaceChildren();
      if (run.training_step) {
        const step = run.training_step;
        const norms = Object.entries(step.grad_norms).map(([k, v]) => el("li", {}, el("code", {}, k), " " + number(v)));
        summary.append(el("p", { class: "stepper__loss" }, "이 훈련 스텝의 평균 손실(토큰당): " + number(step.loss) +
          " · 토큰별 손실은 스텝마다 위에 나옵니다. 역전파 뒤 변화도 노름 ‖∂L/∂θ‖:"), el("ul", { class: "stepper__norms" }, norms));
      }
    }

    function show(index) {
      const { placed, passes } = current();
      at = Math.max(-1, Math.min(placed.length - 1, index));
      for (const span of spans) span.classList.remove("stepper-current");
      // aria-disabled, not disabled: a disabled button would drop the keyboard focus at either end
      previous.setAttribute("aria-disabled", String(at <= 0));
      next.setAttribute("aria-disabled", String(at >= placed.length - 1));
      const t = tOf(at);
      const multi = passes.length > 1;
      earlier.setAttribute("aria-disabled", String(!multi || at < 0 || t === passes[0]));
      later.setAttribute("aria-disabled", String(!multi || t === passes[passes.length - 1]));
      position.textContent = (at + 1) + " / " + placed.length;
      const steps = passes.filter((p) => p >= 1);
      passPosition.textContent = t === null ? "t = " + passes[0] + (multi ? "…" + passes[passes.length - 1] : "") :
        t === 0 ? "t = 0 (디코딩 전)" : "t = " + t + " / " + steps[steps.length - 1];
      passBar.hidden = !multi; // one pass (a constructor, a call before decoding): nothing to move between
      box.dataset.t = t === null ? "" : String(t);
      drawAbout();
      panel.replaceChildren();
      if (at < 0) {
        panel.append(el("p", { class: "stepper__intro" }, introduces ? "‘다음 줄’(→ 또는 j)을 누르면 실행된 줄이 " +
          "차례로 강조되고, 그 줄이 만든 Tensor가 여기에 나옵니다. ‘다음 스텝’(])은 다음 디코딩 스텝의 같은 줄로 갑니다." :
          "‘다음 줄’(→ 또는 j)로 시작합니다."));
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
      panel.append(describePass(current().run, t));
      panel.append(el("p", { class: "stepper__line" }, (lines[0] + 1) + "번째 줄: ", el("code", {}, texts.slice(lines[0], lines[0] + lines.length).join(" "))));
      if (!step.values.length) {
        panel.append(el("p", { class: "stepper__note" }, "이 줄은 새 값을 묶지 않습니다 (조건이나 호출). 다음 줄에서 실행이 어디로 갔는지 보세요."));
      }
      for (const value of step.values) panel.append(showValue(value));
      markOverflow(panel);
    }

    /* The same line in the pass `direction` away (the pass's first line if that one did not run there). */
    function movePass(direction) {
      const { placed, passes } = current();
      const t = tOf(at);
      const k = t === null ? (direction > 0 ? passes.indexOf(Math.max(1, passes[0])) - 1 : -1) : passes.indexOf(t);
      const target = passes[k + direction];
      if (target === undefined) return;
      const line = at >= 0 ? placed[at].step.line : null;
      const same = placed.findIndex((p) => p.step.t === target && p.step.line === line);
      show(same >= 0 ? same : placed.findIndex((p) => p.step.t === target));
    }

    function switchRun(key) {
      if (!runs[key]) return;
      name = key;
      choose.value = key;
      show(-1);
    }

    function onKey(event) {
      if (event.altKey || event.ctrlKey || event.metaKey || event.target === choose) return;
      const moves = { ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1 };
      if (event.key in moves) show(Math.max(0, at + moves[event.key]));
      else if (event.key === "Home") show(0);
      else if (event.key === "End") show(current().placed.length - 1);
      else if (event.key === "]") movePass(1);
      else if (event.key === "[") movePass(-1);
      else return;
      event.preventDefault();
    }

    previous.addEventListener("click", () => show(Math.max(0, at - 1)));
    next.addEventListener("click", () => show(at + 1));
    earlier.addEventListener("click", () => movePass(-1));
    later.addEventListener("click", () => movePass(1));
    choose.addEventListener("change", () => switchRun(choose.value));
    box.addEventListener("keydown", onKey);
    const pre = block.querySelector("pre");
    if (pre) {
      if (!pre.hasAttribute("tabindex")) pre.setAttribute("tabindex", "0");
      pre.addEventListener("keydown", onKey);
    }
    show(-1);

    function follow() { // the fragment, as the live page links here: its sentence at step t
      const wanted = fragment();
      if (!wanted) return;
      const key = Object.keys(runs).find((k) => runs[k].run.sentences.length === 1 && runs[k].run.sentences[0].source === wanted.sentence);
      if (!key) return;
      switchRun(key);
      const index = runs[key].placed.findIndex((p) => p.step.t === wanted.t);
      if (index >= 0) show(index);
      if (index >= 0 && !window.stepperFollowed) { // the first stepper of the page that has the step comes into view
        window.stepperFollowed = true;
        (block.querySelector(".stepper-current") || block).scrollIntoView({ block: "center" });
      }
    }
    follow();
    window.addEventListener("hashchange", follow);
    return box;
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
    window.addEventListener("resize", () => markOverflow(document));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
