// The live translator: the packaged Bahdanau model and the Luong (scaled dot) model of the attention comparison,
// computed in plain JavaScript (assets/live/model.js, loaded before this script) from one weights file per model.
// Normalisation and the input checks follow
// the Python side (translation/corpus.py, search.py); the greedy, forced and beam loops follow search.py's
// greedy_decode and beam_search_decode step for step, one sentence at a time.
(() => {
  const root = document.getElementById("live-translator");
  if (!root) return;
  const EOS = 2, SOS = 1, TOP_K = 5, LENGTH_PENALTY = 1.0;
  const base = root.dataset.base;
  const MODELS = {
    bahdanau: { dir: "live/", label: "바다나우(덧셈형 점수)", name: "바다나우" },
    luong: { dir: "live/luong/", label: "루옹(크기 조정 내적 점수)", name: "루옹" },
  };
  // The bytes of every file each phase needs, as the page states them (a test checks them against the files).
  const FILES = { first: JSON.parse(root.dataset.firstFiles), luong: JSON.parse(root.dataset.luongFiles) };
  const $ = (name, scope = root) => scope.querySelector(`[data-live="${name}"]`);
  const columnOf = (model) => root.querySelector(`[data-model-column="${model}"]`);
  const loaded = {};  // model name -> the model (liveModel.load: its architecture and weights)
  let vocab = null, splits = null, first = true, busy = 0, run = 0;
  let settling = true;  // until the second model has loaded (or failed to) and translated: data-done stays false
  // The sentence shown: {sentence, ids, source, results: {model: decoded}, forced: {model: Map(step -> token)},
  // selected: {model: step}}. A forced map holds the steps where the reader chose the word; the other steps are greedy.
  let current = null;
  let pending = readFragment();  // the view the URL's fragment asks for, restored by the first translation
  let focusAfter = null;  // the control that started the run in progress: it gets the focus back
  // What the browser tests call: the same functions the page uses; times: when each model was ready and when its first
  // translation was on the page, in ms after the page started loading (performance.now() counts from the navigation).
  const live = { models: loaded, times: {}, translated: {} };
  window.liveApi = live;

  // ---------- input: normalise, check, say where a sentence comes from ----------

  function normalize(sentence) {  // normalize_string: lowercase, drop accents, split off .!?, other non-letters -> space
    let s = sentence.toLowerCase().trim().normalize("NFD").replace(/\p{Mn}/gu, "");
    s = s.replace(/([.!?])/g, " $1");
    return s.replace(/[^a-zA-Z.!?]+/g, " ");
  }

  // A count with Korean digit grouping, as toLocaleString("ko-KR") writes it (1,234), without loading the locale's
  // data, which costs the first translation about 10 ms.
  const count = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  function problems(sentence) {  // every check of prepare_sentences at once, in Korean, with what the model saw
    const found = [];
    const foreign = [...new Set([...sentence].filter((c) => /\p{L}/u.test(c) && !/\p{Script=Latin}/u.test(c)))];
    if (foreign.length) found.push(`라틴 문자가 아닌 글자(${foreign.join("")})가 있습니다. 모델은 프랑스어를 읽습니다.`);
    const words = normalize(sentence).trim().split(/\s+/).filter(Boolean);
    if (!words.length && !foreign.length) found.push("빈 문장입니다. 프랑스어 문장을 입력하세요.");
    if (words.length > vocab.max_words) {
      found.push(`정규화한 뒤 토큰이 ${words.length}개입니다(${words.join(" ")}). 마침표 같은 문장부호도 토큰 하나로 ` +
        `셉니다. 모델은 토큰 ${vocab.max_words}개까지의 문장으로 학습했습니다.`);
    }
    const unknown = [...new Set(words.filter((w) => !vocab.index.has(w)))];
    if (unknown.includes("?")) {
      const ends = splits.endings;
      found.push(`'?': 학습 문장 ${count(splits.train.size)}개 가운데 물음표로 끝나는 문장은 없습니다. ` +
        `${count(ends["."] || 0)}개가 '.'로, ${count(ends["!"] || 0)}개가 '!'로 끝나는 평서문입니다. ` +
        "이 모델은 질문을 본 적이 없으니 물음표를 빼거나 마침표로 바꿔 보세요.");
    }
    const words_ = unknown.filter((w) => w !== "?");
    if (words_.length) {
      found.push(`사전에 없는 단어: ${words_.map((w) => `'${w}'`).join(", ")}. 모델은 학습 문장에 나온 프랑스어 단어 ` +
        `${count(frenchWords())}개만 압니다. 학습 문장은 “je suis …”, “il est …”처럼 주어와 être로 시작하는 ` +
        "짧은 문장이라 그 밖의 일상 어휘는 대부분 빠져 있습니다.");
    }
    return found;
  }

  function frenchWords() {  // the source vocabulary without its special tokens (<pad>, <sos>, <eos>, <unk>)
    return vocab.source.filter((w) => !/^<[a-z]+>$/.test(w)).length;
  }

  function dropped(sentence) {  // what normalisation silently removes besides spaces and apostrophes (emoji, digits)
    const kept = /[\p{L}\p{Mn}.!?\s'’-]/u;
    return [...new Set([...sentence].filter((c) => !kept.test(c)))];
  }

  function origin(normalised) {
    if (splits.train.has(normalised)) return { kind: "train", text: "학습에 쓴 문장" };
    if (splits.held_out.has(normalised)) return { kind: "held-out", text: "평가용으로 떼어 둔 문장(학습에 안 씀)" };
    return { kind: "new", text: "새 문장(학습·평가 데이터에 없음)" };
  }

  // ---------- the model: encoder once, then one decoder step at a time ----------

  function encode(model, ids) {  // the encoder's keys, the keys projected once, and the decoder's first state
    const encoded = window.liveModel.encode(loaded[model], ids);
    return { ...encoded, state: window.liveModel.initState(loaded[model], encoded) };
  }

  function step(model, encoded, state, token) {  // the decoder's forward_step (model.js)
    const out = window.liveModel.step(loaded[model], encoded, state, token);
    return { logits: out.logits, state: out.state, weights: Array.from(out.weights), scores: Array.from(out.scores) };
  }

  function topk(logits, k) {  // the k largest logits, largest first (ties: the smaller index first)
    const best = [];
    for (let i = 0; i < logits.length; i++) {
      if (best.length < k || logits[i] > logits[best[best.length - 1]]) {
        let at = best.length;
        while (at > 0 && logits[i] > logits[best[at - 1]]) at--;
        best.splice(at, 0, i);
        if (best.length > k) best.pop();
      }
    }
    return best;
  }

  function logSumExp(logits) {  // in float64: max + log sum exp(l - max)
    let max = -Infinity;
    for (const l of logits) max = Math.max(max, l);
    let sum = 0;
    for (const l of logits) sum += Math.exp(l - max);
    return max + Math.log(sum);
  }

  function logSoftmax(logits) {  // log p_v = l_v - log sum exp(l)
    const shift = logSumExp(logits);
    return Float64Array.from(logits, (l) => l - shift);
  }

  function candidates(logits) {  // top-k by logits; log-probabilities computed only to show that the order is the same
    const shift = logSumExp(logits);
    return topk(logits, TOP_K).map((token) => {
      const logp = logits[token] - shift;
      return { token, logit: logits[token], logp, prob: Math.exp(logp) };
    });
  }

  // Greedy decoding (greedy_decode), except at the steps where the reader chose the word. `forced` is a Map
  // (step -> token) or, as `greedy_search`'s prefix, an array of the first tokens.
  async function decode(model, ids, forced = new Map(), onRow = async () => true) {
    if (Array.isArray(forced)) forced = new Map(forced.map((token, t) => [t, token]));
    const encoded = encode(model, ids);
    let state = encoded.state;
    const tokens = [], weights = [], scores = [], tops = [], shifts = [];
    for (let t = 0; t < vocab.max_length; t++) {
      const out = step(model, encoded, state, t === 0 ? SOS : tokens[t - 1]);
      const top = candidates(out.logits);
      const token = forced.has(t) ? forced.get(t) : top[0].token;
      tokens.push(token);
      weights.push(out.weights);
      scores.push(out.scores);
      tops.push(top);
      shifts.push(logSumExp(out.logits));
      if (!(await onRow(t, token, out.weights, forced.has(t)))) return null;  // a newer run took over
      if (token === EOS) break;
      state = out.state;
    }
    return { tokens, weights, scores, candidates: tops, logSumExp: shifts, forced: [...forced.keys()] };
  }
  live.decode = decode;

  // Beam search (beam_search_decode for one sentence): the k best prefixes live on, an <eos> among the k best
  // candidates finishes a hypothesis, scores are log-probabilities divided by length ** LENGTH_PENALTY.
  // Each kept or finished hypothesis remembers its parent (its row among the previous step's kept ones): the tree.
  async function beam(model, ids, k, lengthPenalty = LENGTH_PENALTY) {
    const encoded = encode(model, ids);
    let kept = [{ tokens: [], score: 0, state: encoded.state }];
    let best = null, finishedCount = 0;
    const steps = [];
    for (let t = 0; t < vocab.max_length; t++) {
      const extended = [];
      for (let b = 0; b < kept.length; b++) {
        const hyp = kept[b];
        const out = step(model, encoded, hyp.state, t === 0 ? SOS : hyp.tokens[t - 1]);
        const logp = logSoftmax(out.logits);
        for (const token of topk(logp, 2 * k)) {  // only the 2k best of a row can be among the 2k best overall
          extended.push({ tokens: [...hyp.tokens, token], score: hyp.score + logp[token], state: out.state, row: b });
        }
      }
      extended.sort((a, b) => b.score - a.score || a.row - b.row);
      const top = extended.slice(0, 2 * k);
      const finished = [];
      top.forEach((hyp, rank) => {
        if (hyp.tokens[t] === EOS && rank < k && finishedCount < k) {
          const normalised = hyp.score / (t + 1) ** lengthPenalty;
          finished.push({ tokens: hyp.tokens, score: hyp.score, normalised, parent: hyp.row });
          if (!best || normalised > best.normalised) best = { tokens: hyp.tokens, normalised, step: t };
        }
      });
      finishedCount += finished.length;
      kept = top.filter((hyp) => hyp.tokens[t] !== EOS).slice(0, k);
      steps.push({ live: kept.map(({ tokens, score, row }) => ({ tokens, score, parent: row })), finished });
      if (finishedCount >= k) break;
    }
    if (finishedCount === 0) {
      best = { tokens: kept[0].tokens, normalised: kept[0].score / Math.max(kept[0].tokens.length, 1) ** lengthPenalty };
    }
    return { tokens: best.tokens, score: best.normalised, steps };
  }
  live.beam = beam;

  // ---------- drawing ----------

  const words = (tokens) => tokens.filter((t) => t !== EOS).map((t) => vocab.target[t]).join(" ");
  // The site's one grey scale (greyscale.js: matplotlib's "gray", as in the heatmap figures and the stepper; the page
  // loads it before this script)
  const shade = (w) => window.greyScale.level(w);
  const ink = (v) => window.greyScale.ink(v);  // the number on a grey cell: black or white, whichever stands out more
  const fixed = (x, digits) => (Math.abs(x) < 0.5 * 10 ** -digits ? 0 : x).toFixed(digits);  // no "-0.000"

  function probability(p) {  // three significant digits, so that no candidate reads 0: percent, then powers of ten
    if (p >= 0.0001) return `${Number((100 * p).toPrecision(3))}%`;
    const [mantissa, exponent] = p.toExponential(2).split("e");
    return `${mantissa}×10<sup>${Number(exponent)}</sup>`;
  }

  function busyOn(returnTo = document.activeElement) {
    if (!busy) focusAfter = returnTo && returnTo !== document.body ? returnTo : null;
    busy++;
    root.dataset.busy = "true";
    root.querySelectorAll("button, input, select").forEach((control) => { control.disabled = true; });
    root.querySelectorAll("[data-live=output]").forEach((output) => output.setAttribute("aria-busy", "true"));
  }

  function busyOff() {
    busy--;
    if (busy) return;
    enableControls();
    root.querySelectorAll("[data-live=output]").forEach((output) => output.setAttribute("aria-busy", "false"));
    const target = typeof focusAfter === "function" ? focusAfter() : focusAfter;
    focusAfter = null;
    if (target?.isConnected && !target.disabled) target.focus();
    updateScrollCues();
  }

  function enableControls() {  // after a run: every control, less the chosen candidates and models not yet loaded
    root.dataset.busy = "false";
    const broken = root.dataset.ready === "error";  // nothing to run: the controls stay off
    root.querySelectorAll("button, input, select, option").forEach((control) => {
      control.disabled = broken || control.dataset.off === "true"
        || (control.dataset.model !== undefined && !loaded[control.dataset.model]);
    });
  }

  function drawHeader(column, source) {
    const table = document.createElement("table");
    table.className = "live-heatmap";
    table.dataset.live = "heatmap";
    table.weights = [];  // row t: the weights α_t· drawn in it (for the linked highlight)
    const head = table.createTHead().insertRow();
    const corner = document.createElement("th");
    corner.innerHTML = "<span class='live-axis'>t ↓ · j →</span>";
    head.appendChild(corner);
    source.forEach((word, j) => {
      const cell = document.createElement("th");
      cell.scope = "col";
      cell.textContent = word;
      cell.tabIndex = 0;  // focusable: focusing a source word highlights the output words that looked at it
      cell.dataset.position = j;
      cell.setAttribute("aria-label", `원문 토큰 ${j + 1}: ${word}`);
      linkable(table, cell, () => linkSource(table, j));
      head.appendChild(cell);
    });
    table.createTBody();
    $("table", column).replaceChildren(table);
    return table;
  }

  function drawRow(column, table, t, token, weights, forced) {
    const row = table.tBodies[0].insertRow();
    row.dataset.step = t;
    table.weights[t] = weights;
    const label = document.createElement("th");
    label.scope = "row";
    const pick = document.createElement("button");
    pick.type = "button";
    pick.className = "live-step";
    pick.dataset.live = "step";
    pick.textContent = `${t + 1}. ${vocab.target[token]}${forced ? " ✎" : ""}`;
    pick.title = forced ? "직접 고른 단어(강요): 이 스텝의 후보 보기" : "이 스텝의 후보 보기";
    pick.disabled = busy > 0;  // drawn during a run: off like every other control until it ends
    pick.addEventListener("click", () => selectStep(column.dataset.modelColumn, t));
    linkable(table, pick, () => linkStep(table, t));
    label.appendChild(pick);
    row.appendChild(label);
    if (forced) row.classList.add("forced");
    for (const w of weights) {
      const cell = row.insertCell();
      const v = shade(w);
      cell.style.background = `rgb(${v}, ${v}, ${v})`;
      cell.style.color = ink(v);
      cell.textContent = w.toFixed(2);
      cell.title = w.toFixed(6);
    }
  }

  // Linked highlighting: an output word lights its source words by α_tj, a source word lights the output words.
  // The pointer or the focus lights; leaving an element clears only its own lighting, and the focused word (if any)
  // lights again.
  function linkable(table, element, light) {
    element.light = light;
    const on = () => { table.litBy = element; light(); };
    const off = () => {
      if (table.litBy !== element) return;
      unlink(table);
      table.litBy = null;
      const focused = document.activeElement;
      if (focused !== element && focused?.light && table.contains(focused)) { table.litBy = focused; focused.light(); }
    };
    for (const event of ["mouseenter", "focus"]) element.addEventListener(event, on);
    for (const event of ["mouseleave", "blur"]) element.addEventListener(event, off);
  }

  function mark(element, weight) {
    element.classList.add("linked");
    element.style.setProperty("--live-link", weight.toFixed(3));
    element.dataset.link = weight.toFixed(3);
  }

  function linkStep(table, t) {
    unlink(table);
    const weights = table.weights[t] || [];
    table.tHead.rows[0].querySelectorAll("th[data-position]").forEach((cell) => mark(cell, weights[cell.dataset.position]));
    table.tBodies[0].rows[t]?.classList.add("linking");
  }

  function linkSource(table, j) {
    unlink(table);
    [...table.tBodies[0].rows].forEach((row, t) => mark(row.querySelector(".live-step"), table.weights[t][j]));
    table.tHead.rows[0].querySelector(`th[data-position="${j}"]`)?.classList.add("linking");
  }

  function unlink(table) {
    table.querySelectorAll(".linked, .linking").forEach((element) => {
      element.classList.remove("linked", "linking");
      element.style.removeProperty("--live-link");
      delete element.dataset.link;
    });
  }

  function selectStep(model, t) {
    if (!current?.results[model]) return;
    current.selected[model] = t;
    showCandidates(model, t);
    writeFragment();
  }
  live.select = selectStep;

  function showCandidates(model, t) {
    const column = columnOf(model);
    const result = current?.results[model];
    const panel = $("candidates", column);
    if (!result || !result.candidates[t]) { panel.replaceChildren(); return; }
    column.querySelectorAll("tr.selected").forEach((row) => row.classList.remove("selected"));
    column.querySelector(`tr[data-step="${t}"]`)?.classList.add("selected");
    column.querySelectorAll("[data-live=step]").forEach((button, i) => button.setAttribute("aria-pressed", String(i === t)));
    const chosen = result.tokens[t];
    const shift = result.logSumExp[t];
    const table = document.createElement("table");
    table.className = "live-topk";
    table.dataset.step = t;
    table.setAttribute("aria-describedby", `live-topk-${model}`);
    const caption = explanation(`live-topk-${model}`, `<strong>스텝 ${t + 1}의 후보 ${TOP_K}개</strong>(로짓 순). ` +
      `log p = 로짓 − ${shift.toFixed(3)}: 모든 단어에서 같은 수(log Σ exp 로짓)를 빼므로 로짓의 순위와 log p의 순위가 ` +
      "같습니다. 확률 p = exp(log p)는 유효숫자 세 자리로, 작은 값은 10의 거듭제곱으로 적습니다.");
    const head = table.createTHead().insertRow();
    for (const title of ["순위", "단어", "로짓", "log p", "확률 p", ""]) {
      const th = document.createElement("th");
      th.textContent = title;
      head.appendChild(th);
    }
    const body = table.createTBody();
    result.candidates[t].forEach((c, rank) => {
      const row = body.insertRow();
      row.dataset.token = c.token;
      if (c.token === chosen) row.classList.add("chosen");
      row.insertCell().textContent = rank + 1;
      row.insertCell().textContent = vocab.target[c.token];
      row.insertCell().textContent = c.logit.toFixed(3);
      row.insertCell().textContent = fixed(c.logp, 3);
      row.insertCell().innerHTML = probability(c.prob);  // digits and a superscript only
      const force = document.createElement("button");
      force.type = "button";
      force.dataset.live = "force";
      force.textContent = c.token === chosen ? "고른 단어" : "강요";
      force.dataset.off = String(c.token === chosen);
      force.disabled = c.token === chosen || busy > 0;
      // the name holds the button's own words (고른 단어, 강요) outside brackets: a bracketed part reads as an aside
      const word = vocab.target[c.token];
      force.setAttribute("aria-label", c.token === chosen ? `스텝 ${t + 1}의 고른 단어 '${word}'` : `스텝 ${t + 1}에 '${word}'를 강요`);
      force.addEventListener("click", () => forceWord(model, t, c.token));
      row.insertCell().appendChild(force);
    });
    const scores = scoreTable(model, result, t);
    panel.replaceChildren(caption, scrolling(table), scores.caption, scrolling(scores.table));
    if (model === "bahdanau") panel.append(lineByLine(t));
    updateScrollCues();
  }

  // Back to the code: the line-by-line page of one decoding step, whose stepper opens this sentence's step t (stepper.js
  // reads the fragment). The stepper has only the sentences its trace recorded (assets/traces/bahdanau.json, read
  // after the first translation): for one of them, at a recorded step of its greedy translation, the link; for any
  // other, which sentences are recorded, and a button that translates one.
  const STEP_PAGE = "bahdanau/decoder.html";
  let recorded = null;  // sentence -> the steps t (from 1) of its recorded greedy translation

  async function loadRecorded() {
    const response = await fetch(`${base}traces/bahdanau.json`);
    if (!response.ok) throw new Error(`traces/bahdanau.json: HTTP ${response.status}`);
    const trace = await response.json();
    recorded = new Map();
    for (const run of Object.values(trace.runs)) {  // the first one-sentence run of a sentence, as stepper.js picks it
      const source = run.sentences.length === 1 && run.passes ? run.sentences[0].source : null;
      if (source && !recorded.has(source)) recorded.set(source, run.passes.map((pass) => pass.t));
    }
    root.querySelectorAll("[data-live=line-by-line-box]").forEach((box) => box.replaceWith(lineByLine(Number(box.dataset.step))));
  }

  function lineByLine(t) {
    const p = document.createElement("p");
    p.className = "live-caption";
    p.dataset.live = "line-by-line-box";
    p.dataset.step = t;
    if (!recorded || !current) return p;  // the list of recorded sentences is not in yet
    const sentence = normalize(current.sentence).trim().split(/\s+/).join(" ");
    if (recorded.get(sentence)?.includes(t + 1) && !current.forced.bahdanau.size) {
      const link = document.createElement("a");
      link.dataset.live = "line-by-line";
      link.href = `${STEP_PAGE}#${new URLSearchParams({ s: sentence, t: t + 1 })}`;
      link.textContent = `스텝 ${t + 1}: 코드 한 줄씩 따라가기 (디코더의 한 스텝)`;
      p.append(link);
      return p;
    }
    const sentences = [...recorded.keys()];
    p.append(`코드 한 줄씩 따라가기(디코더의 한 스텝)는 기록해 둔 문장 ${sentences.map((s) => `«${s}»`).join(", ")}의 ` +
      "강요 없는 탐욕적 번역에서만 스텝마다 열립니다. ");
    const offered = sentences.find((s) => s !== sentence) ?? sentences[0];
    if (offered !== undefined) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "live-example";
      button.dataset.live = "recorded-example";
      button.textContent = `«${offered}» 번역하기`;
      button.disabled = busy > 0;
      button.addEventListener("click", () => {
        $("input").value = offered;
        translate(button);
      });
      p.append(button);
    }
    return p;
  }

  function explanation(id, html) {  // a table's caption, outside its scrolling box so that it wraps on a phone
    const p = document.createElement("p");
    p.className = "live-caption";
    p.id = id;
    p.innerHTML = html;
    return p;
  }

  function scrolling(table) {
    const box = document.createElement("div");
    box.className = "live-scroll";
    box.appendChild(table);
    return box;
  }

  function scoreTable(model, result, t) {  // the raw scores e_tj of one step beside their softmax α_tj
    const scores = result.scores[t], weights = result.weights[t];
    const max = Math.max(...scores);
    const table = document.createElement("table");
    table.className = "live-scores";
    table.dataset.live = "scores";
    table.setAttribute("aria-describedby", `live-scores-${model}`);
    const caption = explanation(`live-scores-${model}`, `<strong>스텝 ${t + 1}의 점수 e<sub>tj</sub>와 가중치 ` +
      "α<sub>tj</sub></strong>: α<sub>tj</sub> = exp(e<sub>tj</sub> − max e) / Σ<sub>j</sub> exp(e<sub>tj</sub> − max e). " +
      "소프트맥스는 점수의 순서를 지키므로 가장 큰 점수(굵게)가 가장 큰 가중치입니다. 점수 자체의 크기는 모델마다 다르고, " +
      "가중치를 정하는 것은 점수끼리의 차이입니다.");
    const head = table.createTHead().insertRow();
    for (const title of ["j", "원문 토큰", "점수 e", "e − max e", "가중치 α"]) {
      const th = document.createElement("th");
      th.innerHTML = title;
      head.appendChild(th);
    }
    const body = table.createTBody();
    scores.forEach((score, j) => {
      const row = body.insertRow();
      if (score === max) row.classList.add("chosen");
      row.insertCell().textContent = j + 1;
      row.insertCell().textContent = current.source[j];
      row.insertCell().textContent = score.toFixed(3);
      row.insertCell().textContent = fixed(score - max, 3);
      row.insertCell().textContent = weights[j].toFixed(4);
    });
    return { caption, table };
  }

  // ---------- runs: one at a time; a newer run makes every older one stop drawing ----------

  async function show(model, mine) {
    const column = columnOf(model);
    const forced = current.forced[model];
    const table = drawHeader(column, current.source);
    $("output", column).textContent = "";
    $("candidates", column).replaceChildren();
    const shown = [];
    const result = await decode(model, current.ids, forced, async (t, token, weights, isForced) => {
      if (mine !== run) return false;
      drawRow(column, table, t, token, weights, isForced);
      shown.push(token);
      $("output", column).textContent = words(shown);
      // A model's first translation is drawn at once (its time is the one the page states); later runs pause
      // between rows so that the reader sees them arrive.
      const pause = model in live.translated ? Number(root.dataset.stepMs ?? 120) : 0;
      if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
      return mine === run;
    });
    if (!result || mine !== run) return false;
    current.results[model] = result;
    $("output", column).textContent = words(result.tokens) || "(빈 번역)";
    $("reset", column).hidden = !forced.size;
    const wanted = current.selected[model] ?? (forced.size ? Math.max(...forced.keys()) + 1 : 0);
    current.selected[model] = Math.min(wanted, result.tokens.length - 1);
    showCandidates(model, current.selected[model]);
    if (!(model in live.translated)) live.translated[model] = performance.now();
    return true;
  }

  async function runModels(models, returnTo) {
    const mine = ++run;
    busyOn(returnTo);
    root.dataset.done = "false";
    try {
      for (const model of models) {
        if (!(await show(model, mine))) return;
      }
      window.liveResult = { tokens: current.results.bahdanau.tokens, weights: current.results.bahdanau.weights,
        source: current.source, luong: current.results.luong ?? null };
      writeFragment();
      if (first) {
        first = false;
        window.liveFirstTranslationMs = performance.now();  // since the page started loading
      }
      drawTimes();
    } finally {
      busyOff();
      if (mine === run && !settling) root.dataset.done = "true";
    }
  }

  function drawTimes() {  // one figure per model, measured as the page states it
    const parts = Object.keys(MODELS).filter((m) => m in live.translated)
      .map((m) => `${MODELS[m].name} ${count(Math.round(live.translated[m]))} ms`);
    $("latency").textContent = `이 브라우저에서 잰 시간(페이지를 열기 시작한 때부터 그 모델의 첫 번역이 화면에 다 나올 때까지): ${parts.join(" · ")}`;
  }

  function translate(returnTo) {
    if (busy) return;  // the controls are disabled during a run; Enter or a script can still get here
    const sentence = $("input").value;
    const found = problems(sentence);
    const message = $("message");
    message.replaceChildren();
    root.querySelectorAll("[data-model-column]").forEach((column) => {
      $("table", column).replaceChildren();
      $("output", column).textContent = "";
      $("candidates", column).replaceChildren();
      $("reset", column).hidden = true;
    });
    $("beam-result").replaceChildren();
    $("beam-output").replaceChildren();
    $("origin").textContent = "";
    if (found.length) {
      const list = document.createElement("ul");
      for (const text of found) list.appendChild(document.createElement("li")).textContent = text;
      message.append("번역하지 않았습니다.", list);
      current = null;
      window.liveResult = { error: found.join(" "), problems: found };
      writeFragment(sentence);
      root.dataset.done = "true";
      return;
    }
    const normalised = normalize(sentence).trim().split(/\s+/);
    const from = origin(normalised.join(" "));
    $("origin").textContent = `입력: ${normalised.join(" ")} — ${from.text}`;
    $("origin").dataset.kind = from.kind;
    const ignored = dropped(sentence);
    if (ignored.length) message.textContent = `정규화에서 버린 글자: ${ignored.join(" ")}`;
    current = {
      sentence, ids: [...normalised.map((w) => vocab.index.get(w)), EOS], source: [...normalised, "<eos>"],
      origin: from.kind, results: {}, forced: {}, selected: {},
    };
    for (const model of Object.keys(MODELS)) current.forced[model] = new Map();
    if (pending && pending.sentence === sentence) restoreForcing(pending);
    pending = null;
    return runModels(Object.keys(MODELS).filter((model) => loaded[model]), returnTo);
  }
  live.translate = translate;

  function forceWord(model, t, token) {
    if (busy || !current) return;
    // The steps before t keep their words (the reader's choices stay choices, greedy words stay greedy); later
    // choices were made after another word and are dropped.
    const forced = new Map([...current.forced[model]].filter(([step]) => step < t));
    forced.set(t, token);
    current.forced[model] = forced;
    current.selected[model] = t + 1;  // the next step's candidates: force it too, with this one kept
    return runModels([model], () => selectedButton(model));
  }
  live.force = forceWord;

  function resetForcing(model) {
    if (busy || !current) return;
    current.forced[model] = new Map();
    current.selected[model] = 0;
    return runModels([model], () => selectedButton(model));
  }

  const selectedButton = (model) => columnOf(model).querySelector("tr.selected [data-live=step]");

  async function runBeam() {
    if (busy || !current) return;
    const model = $("beam-model").value, k = Number($("beam-k").value);
    const mine = ++run;
    busyOn($("beam-run"));
    root.dataset.done = "false";
    try {
      const result = await beam(model, current.ids, k);
      if (mine !== run) return;
      drawBeam(model, k, result);
      window.liveBeam = { model, k, tokens: result.tokens, score: result.score, steps: result.steps.length };
    } finally {
      busyOff();
      if (mine === run) root.dataset.done = "true";
    }
  }

  // The beam as a tree: the root is <sos>; a node is a word kept at its step (its cumulative log-probability), or an
  // <eos> that finished a hypothesis (its score divided by the length); the chosen translation is marked.
  function drawBeam(model, k, result) {
    const box = $("beam-result");
    const final = $("beam-output");
    final.innerHTML = "<strong>빔 서치 결과:</strong> ";
    final.append(`${words(result.tokens)} — 길이로 나눈 점수 ${result.score.toFixed(4)} ` +
      `(${MODELS[model].label}, k = ${k}, 길이 벌점 α = ${LENGTH_PENALTY})`);
    const tree = document.createElement("ul");
    tree.className = "live-beam-tree";
    tree.dataset.live = "beam-tree";
    tree.setAttribute("aria-label", "빔 서치의 가설 나무: 스텝마다 살아남은 가설과 끝난 가설");
    const top = tree.appendChild(document.createElement("li"));
    top.appendChild(node("<sos>", "", "root", -1));
    let parents = [top];
    result.steps.forEach((s, t) => {
      const children = [];
      const under = (parent) => parent.querySelector(":scope > ul") || parent.appendChild(document.createElement("ul"));
      for (const hyp of s.live) {
        const item = under(parents[t === 0 ? 0 : hyp.parent]).appendChild(document.createElement("li"));
        item.appendChild(node(vocab.target[hyp.tokens[t]], hyp.score.toFixed(3), "kept", t));
        children.push(item);
      }
      for (const hyp of s.finished) {
        const item = under(parents[t === 0 ? 0 : hyp.parent]).appendChild(document.createElement("li"));
        const chosen = hyp.tokens.length === result.tokens.length && hyp.tokens.every((x, i) => x === result.tokens[i]);
        const label = `${hyp.score.toFixed(3)} ÷ ${hyp.tokens.length} = ${hyp.normalised.toFixed(4)}${chosen ? " ★" : ""}`;
        item.appendChild(node("<eos>", label, chosen ? "finished best" : "finished", t));
      }
      parents = children;
    });
    const note = document.createElement("p");
    note.className = "live-beam-note";
    note.textContent = "나무 읽기: 한 줄이 한 스텝 깊어질 때마다 단어 하나. 괄호는 누적 로그 확률, 초록 테두리의 <eos>는 끝난 가설" +
      "(점수 ÷ 길이), ★는 고른 번역. 자식이 없는 가설은 다음 스텝에서 k개 안에 들지 못했거나, 끝난 가설이 k개가 되어 탐색이 멈춘 것입니다.";
    box.replaceChildren(note, tree);
    updateScrollCues();
  }

  function node(word, score, kind, t) {
    const span = document.createElement("span");
    span.className = `live-hyp ${kind}`;
    span.dataset.step = t;
    span.textContent = score ? `${word} (${score})` : word;
    return span;
  }

  // ---------- the URL's fragment: sentence, forced words, k and the selected steps ----------

  function readFragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (!params.has("s")) return null;
    const state = { sentence: params.get("s"), forced: {}, selected: {}, k: params.get("k"), beam: params.get("beam") };
    for (const model of Object.keys(MODELS)) {
      state.forced[model] = (params.get(`force.${model}`) || "").split(",").filter(Boolean).map((entry) => {
        const at = entry.indexOf(":");
        return [Number(entry.slice(0, at)) - 1, entry.slice(at + 1)];
      });
      if (params.has(`step.${model}`)) state.selected[model] = Number(params.get(`step.${model}`)) - 1;
    }
    return state;
  }

  function restoreForcing(state) {  // words outside the vocabulary or steps out of range are dropped, with a note
    const skipped = [];
    const target = new Map(vocab.target.map((w, i) => [w, i]));
    for (const model of Object.keys(MODELS)) {
      for (const [t, word] of state.forced[model]) {
        if (Number.isInteger(t) && t >= 0 && t < vocab.max_length && target.has(word)) {
          current.forced[model].set(t, target.get(word));
        } else skipped.push(`${t + 1}:${word}`);
      }
      const t = state.selected[model];
      if (Number.isInteger(t) && t >= 0 && t < vocab.max_length) current.selected[model] = t;
    }
    if (skipped.length) $("message").textContent = `주소에서 읽지 못한 강요: ${skipped.join(", ")}`;
  }

  function writeFragment(sentence = current?.sentence) {
    if (sentence === undefined) return;
    const params = new URLSearchParams({ s: sentence, k: $("beam-k").value });
    if ($("beam-model").value !== "bahdanau") params.set("beam", $("beam-model").value);
    for (const model of Object.keys(MODELS)) {
      const forced = current?.forced[model];
      if (forced?.size) {
        params.set(`force.${model}`, [...forced].map(([t, token]) => `${t + 1}:${vocab.target[token]}`).join(","));
      }
      if (current?.results[model] && current.selected[model] !== undefined) {
        params.set(`step.${model}`, current.selected[model] + 1);
      }
    }
    history.replaceState(history.state, "", `#${params}`);
  }

  function restoreControls(state) {  // before loading: the sentence, k and the beam's model, even from disk
    if (!state) return;
    $("input").value = state.sentence;
    if ([...$("beam-k").options].some((o) => o.value === state.k)) $("beam-k").value = state.k;
    if (state.beam in MODELS) $("beam-model").value = state.beam;
  }

  // ---------- narrow screens: a box that scrolls sideways says so ----------

  // Reading whether a box overflows needs a layout, and a cue changes it: both wait for the next frame, which lays the
  // page out anyway, once however many tables were drawn since (a cue read at once, in the middle of a run, laid out
  // the whole page parsed so far before the first translation was on it).
  let cueFrame = 0;
  function updateScrollCues() {
    cueFrame ||= requestAnimationFrame(() => {
      cueFrame = 0;
      root.querySelectorAll(".live-scroll").forEach((box) => {  // an empty box cannot overflow: no layout to read
        const overflow = String(box.childElementCount > 0 && box.scrollWidth > box.clientWidth + 1);
        if (box.dataset.overflow !== overflow) box.dataset.overflow = overflow;  // unchanged: no new layout
      });
    });
  }

  // ---------- loading, with progress against the known total of each phase ----------

  const progress = { files: new Map(), phase: "first" };

  const size = (n) => (n < 1e6 ? `${(n / 1e3).toFixed(0)} kB` : `${(n / 1e6).toFixed(1)} MB`);
  const total = (phase) => Object.values(FILES[phase]).reduce((a, b) => a + b, 0);
  const PHASES = { first: "첫 번역에 필요한 파일", luong: "루옹 모델" };

  // One bar over both models' files (the first translation's, then the Luong model's): it never goes back when the
  // second model starts; the line under it counts the phase in progress.
  const have = (path, bytes) => Math.min(progress.files.get(path)?.got ?? 0, bytes);
  function drawProgress() {
    const phase = progress.phase;
    const stated = FILES[phase];
    let got = 0;
    const parts = [];
    for (const [path, bytes] of Object.entries(stated)) {
      const file = progress.files.get(path);
      got += have(path, bytes);
      parts.push(`${path.split("/").pop()} ${file?.done ? size(bytes) : `${size(have(path, bytes))}/${size(bytes)}`}`);
    }
    const all = total(phase);
    const both = { ...FILES.first, ...FILES.luong };
    const bar = $("progress-bar");
    bar.max = total("first") + total("luong");
    bar.value = Object.entries(both).reduce((sum, [path, bytes]) => sum + have(path, bytes), 0);
    bar.dataset.phase = phase;
    const done = [...Object.keys(stated)].every((path) => progress.files.get(path)?.done);
    bar.hidden = Object.keys(both).every((path) => progress.files.get(path)?.done);
    $("progress-text").textContent = done
      ? `불러온 파일: 첫 번역 ${size(total("first"))}${progress.files.has(Object.keys(FILES.luong)[0]) ? ` · 루옹 모델 ${size(total("luong"))}` : ""}`
      : `${PHASES[phase]} ${size(got)}/${size(all)} (${Math.floor((100 * got) / all)}%): ${parts.join(" · ")}`;
    root.dataset.downloaded = [...progress.files.values()].reduce((a, file) => a + file.got, 0);
  }

  let frame = 0;
  function laterProgress() {  // at most once a frame: a redraw per 64 kB chunk would cost the first translation
    frame ||= requestAnimationFrame(() => { frame = 0; drawProgress(); });
  }

  // The files, read as they arrive by the loader that overrides/main.html starts at the top of <head>
  // (window.liveLoader, which requested the first translation's files there): each file's bytes so far, counted for
  // the progress bar, and its bytes when it is in.
  const loader = window.liveLoader;
  async function download(path) {
    const file = loader.files[path] ?? loader.read(path, fetch(`${base}${path}`));
    progress.files.set(path, file);  // {got, done, bytes}, kept up to date by the loader
    drawProgress();
    return file.bytes;
  }

  const text = (bytes) => JSON.parse(new TextDecoder().decode(bytes));
  const settled = (promise) => { promise.catch(() => {}); return promise; };  // its error is read where it is awaited

  async function openModel(model) {  // unpacked and decoded once: float16 to float32 (int8 when first used)
    loaded[model] = await window.liveModel.load(await download(`${MODELS[model].dir}weights.bin`));
    live.times[model] = performance.now();
    root.dataset[model] = "ready";
  }

  function fillKnowledge() {
    $("known").textContent = `학습 문장 ${count(splits.train.size)}개, 프랑스어 단어 ${count(frenchWords())}개` +
      `(원문 어휘 ${count(vocab.source.length)}개에서 <pad> 같은 특수 토큰을 뺀 수), 토큰 ${vocab.max_words}개까지(마침표 포함).`;
    const examples = [...splits.held_out].filter((s) => !splits.train.has(s) && s.split(" ").every((w) => vocab.index.has(w)));
    const box = $("examples");
    box.replaceChildren();
    for (let i = 0; i < 6 && examples.length; i++) {
      const [sentence] = examples.splice(Math.floor(Math.random() * examples.length), 1);
      const button = box.appendChild(document.createElement("button"));
      button.type = "button";
      button.className = "live-example";
      button.dataset.live = "example";
      button.textContent = sentence;
      button.disabled = busy > 0;
      button.addEventListener("click", () => { $("input").value = sentence; translate(button); });
    }
  }

  function drawSizes() {
    $("progress-note").textContent = `첫 번역에 필요한 파일은 모두 ${size(total("first"))}(바다나우 모델의 가중치 ` +
      `${size(FILES.first["live/weights.bin"])} 포함), 루옹 모델은 그 뒤에 ${size(total("luong"))}를 더 받습니다.`;
  }

  function openedFromDisk() {  // the browser refuses a page opened from a file the model files it would fetch
    const page = location.pathname.split("/").pop() || "live.html";
    $("message").textContent = "파일로 연 페이지(file://)에서는 번역할 수 없습니다. 브라우저가 파일에서 연 페이지의 " +
      "스크립트가 모델 파일을 읽지 못하게 막기 때문입니다. 내려받은 사이트 폴더(site)에서 python -m http.server 를 " +
      `실행하고 http://localhost:8000/${page} 를 여세요(mkdocs serve나 게시된 사이트에서도 됩니다).`;
    $("progress").hidden = true;
    $("examples-line").hidden = true;  // one message: no empty line of examples, nothing that seems to load
    root.dataset.ready = "error";
    busyOn(null);
    busyOff();  // the controls stay off (`enableControls` on a page that cannot translate)
  }

  async function start() {
    restoreControls(pending);
    drawSizes();
    if (location.protocol === "file:") return openedFromDisk();  // nothing fetched: no error for each refused file
    busyOn(null);
    try {
      loader.progress = (file) => (file.done ? drawProgress() : laterProgress());
      const bahdanau = settled(openModel("bahdanau"));
      const [vocabBytes, sentenceBytes] = await Promise.all([
        download("live/vocabularies.json"), download("live/sentences.json"),
      ]);
      const data = text(vocabBytes), sentences = text(sentenceBytes);
      vocab = { ...data, index: new Map(data.source.map((w, i) => [w, i])) };
      const endings = {};
      for (const s of sentences.train) endings[s.slice(-1)] = (endings[s.slice(-1)] || 0) + 1;
      splits = { train: new Set(sentences.train), held_out: new Set(sentences.held_out), endings };
      fillKnowledge();
      await bahdanau;
    } catch (error) {
      $("message").textContent = `모델을 불러오지 못했습니다(${error}). 파일로 연 페이지(file://)에서는 브라우저가 모델 파일을 읽지 못하게 막습니다. mkdocs serve나 게시된 사이트에서 여세요.`;
      $("progress").hidden = true;
      root.dataset.ready = "error";
      busyOff();
      return;
    }
    $("form").addEventListener("submit", (event) => {
      event.preventDefault();
      translate(document.activeElement);  // Enter in the input: the input; a click on the button: the button
    });
    $("beam-run").addEventListener("click", runBeam);
    $("beam-k").addEventListener("change", () => writeFragment());
    $("beam-model").addEventListener("change", () => writeFragment());
    root.querySelectorAll("[data-model-column]").forEach((column) => {
      $("reset", column).addEventListener("click", () => resetForcing(column.dataset.modelColumn));
    });
    // A cue changes the layout, so it is drawn in the next frame (updateScrollCues), not inside the observer's
    // callback: a layout change there makes the browser report "ResizeObserver loop completed with undelivered
    // notifications".
    new ResizeObserver(updateScrollCues).observe(root);
    root.dataset.ready = "true";
    busyOff();
    if (root.dataset.autostart !== "false") await translate(null);
    settled(loadRecorded());  // for the link to the stepper: after the first translation, it competes with nothing
    try {
      progress.phase = "luong";
      drawProgress();
      await openModel("luong");  // after the first translation: it competes with nothing
      while (busy) await new Promise((resolve) => setTimeout(resolve, 50));  // a run in progress finishes first
      enableControls();  // the Luong controls too, now
      if (current && !current.results.luong) await runModels(["luong"], document.activeElement);
    } catch (error) {
      const failure = $("model-error", columnOf("luong"));  // kept: a later translation does not erase it
      failure.textContent = `루옹 모델을 불러오지 못했습니다(${error}). 바다나우 모델은 그대로 쓸 수 있습니다. ` +
        "페이지를 다시 열면 다시 받습니다.";
      failure.hidden = false;
      root.dataset.luong = "error";
      $("progress-bar").hidden = true;
      $("progress-text").textContent = `불러온 파일: 첫 번역 ${size(total("first"))} · 루옹 모델 실패`;
    } finally {
      settling = false;
      if (!busy) root.dataset.done = "true";
    }
  }
  start();
})();
