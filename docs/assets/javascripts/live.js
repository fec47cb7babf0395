// The live translator: the packaged Bahdanau model and the Luong (scaled dot) model of the attention comparison,
// as ONNX graphs with float16 weights, run by onnxruntime-web in the page. Normalisation and the input checks follow
// the Python side (translation/corpus.py, search.py); the greedy, forced and beam loops follow search.py's
// greedy_decode and beam_search_decode step for step, one sentence at a time.
(() => {
  const root = document.getElementById("live-translator");
  if (!root) return;
  const EOS = 2, SOS = 1, TOP_K = 5, LENGTH_PENALTY = 1.0;
  const base = root.dataset.base;
  const MODELS = {
    bahdanau: { dir: "live/", label: "바다나우(덧셈형 점수)" },
    luong: { dir: "live/luong/", label: "루옹(크기 조정 내적 점수)" },
  };
  const $ = (name, scope = root) => scope.querySelector(`[data-live="${name}"]`);
  const loaded = {};  // model name -> {encoder, step}
  let vocab = null, splits = null, first = true, busy = 0, run = 0;
  let settling = true;  // until the second model has loaded (or failed to) and translated: data-done stays false
  let current = null;  // the sentence shown: {words, ids, source, results: {model: decoded}, forced: {model: tokens}}
  // What the browser test calls: the same functions the page uses; times: when each model was ready, in ms after the
  // page started loading (performance.now() counts from the navigation's start).
  const live = { models: loaded, times: {} };
  window.liveApi = live;

  // ---------- input: normalise, check, say where a sentence comes from ----------

  function normalize(sentence) {  // normalize_string: lowercase, drop accents, split off .!?, other non-letters -> space
    let s = sentence.toLowerCase().trim().normalize("NFD").replace(/\p{Mn}/gu, "");
    s = s.replace(/([.!?])/g, " $1");
    return s.replace(/[^a-zA-Z.!?]+/g, " ");
  }

  function problems(sentence) {  // every check of prepare_sentences at once, in Korean
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
    if (unknown.length) {
      found.push(`사전에 없는 단어: ${unknown.map((w) => `'${w}'`).join(", ")}. 학습 문장에 나온 단어만 알아봅니다.`);
    }
    return found;
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

  const int64 = (values, dims) => new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), dims);

  async function encode(model, ids) {
    const { keys, hidden, proj_keys } = await loaded[model].encoder.run({ tokens: int64(ids, [1, ids.length]) });
    return { keys, hidden, proj_keys };
  }

  async function step(model, encoded, hidden, token) {
    const result = await loaded[model].step.run({
      token: int64([token], [1, 1]), hidden, keys: encoded.keys, proj_keys: encoded.proj_keys,
    });
    return { logits: result.logits.data, hidden: result.next_hidden, weights: Array.from(result.weights.data) };
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

  function logSoftmax(logits) {  // in float64: log p_v = l_v - max - log sum exp(l - max)
    let max = -Infinity;
    for (const l of logits) max = Math.max(max, l);
    let sum = 0;
    for (const l of logits) sum += Math.exp(l - max);
    const shift = max + Math.log(sum);
    return Float64Array.from(logits, (l) => l - shift);
  }

  function candidates(logits) {  // top-k by logits; softmax computed only to show that the order is the same
    const logp = logSoftmax(logits);
    return topk(logits, TOP_K).map((token) => ({ token, logit: logits[token], prob: Math.exp(logp[token]) }));
  }

  // Greedy decoding (greedy_decode), except that the first forced.length inputs are the reader's choices.
  async function decode(model, ids, forced = [], onRow = async () => true) {
    const encoded = await encode(model, ids);
    let hidden = encoded.hidden;
    const tokens = [], weights = [], tops = [];
    for (let t = 0; t < vocab.max_length; t++) {
      const out = await step(model, encoded, hidden, t === 0 ? SOS : tokens[t - 1]);
      const top = candidates(out.logits);
      const token = t < forced.length ? forced[t] : top[0].token;
      tokens.push(token);
      weights.push(out.weights);
      tops.push(top);
      if (!(await onRow(t, token, out.weights, t < forced.length))) return null;  // a newer run took over
      if (token === EOS) break;
      hidden = out.hidden;
    }
    return { tokens, weights, candidates: tops, forced: forced.length };
  }
  live.decode = decode;

  // Beam search (beam_search_decode for one sentence): the k best prefixes live on, an <eos> among the k best
  // candidates finishes a hypothesis, scores are log-probabilities divided by length ** LENGTH_PENALTY.
  async function beam(model, ids, k, lengthPenalty = LENGTH_PENALTY) {
    const encoded = await encode(model, ids);
    let live = [{ tokens: [], score: 0, hidden: encoded.hidden }];
    let best = null, finishedCount = 0;
    const steps = [];
    for (let t = 0; t < vocab.max_length; t++) {
      const extended = [];
      for (let b = 0; b < live.length; b++) {
        const hyp = live[b];
        const out = await step(model, encoded, hyp.hidden, t === 0 ? SOS : hyp.tokens[t - 1]);
        const logp = logSoftmax(out.logits);
        for (const token of topk(logp, 2 * k)) {  // only the 2k best of a row can be among the 2k best overall
          extended.push({ tokens: [...hyp.tokens, token], score: hyp.score + logp[token], hidden: out.hidden, row: b });
        }
      }
      extended.sort((a, b) => b.score - a.score || a.row - b.row);
      const top = extended.slice(0, 2 * k);
      const finished = [];
      top.forEach((hyp, rank) => {
        if (hyp.tokens[t] === EOS && rank < k && finishedCount < k) {
          const normalised = hyp.score / (t + 1) ** lengthPenalty;
          finished.push({ tokens: hyp.tokens, score: hyp.score, normalised });
          if (!best || normalised > best.normalised) best = { tokens: hyp.tokens, normalised };
        }
      });
      finishedCount += finished.length;
      live = top.filter((hyp) => hyp.tokens[t] !== EOS).slice(0, k);
      steps.push({ live: live.map(({ tokens, score }) => ({ tokens, score })), finished });
      if (finishedCount >= k) break;
    }
    if (finishedCount === 0) {
      best = { tokens: live[0].tokens, normalised: live[0].score / Math.max(live[0].tokens.length, 1) ** lengthPenalty };
    }
    return { tokens: best.tokens, score: best.normalised, steps };
  }
  live.beam = beam;

  // ---------- drawing ----------

  const words = (tokens) => tokens.filter((t) => t !== EOS).map((t) => vocab.target[t]).join(" ");
  const shade = (w) => Math.round(255 * w);  // matplotlib's "gray" from 0 to 1, as in the heatmap figures

  function busyOn() {
    busy++;
    root.dataset.busy = "true";
    root.querySelectorAll("button, input, select").forEach((control) => { control.disabled = true; });
  }

  function busyOff() {
    busy--;
    if (!busy) enableControls();
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
    const caption = table.createCaption();
    caption.innerHTML = "가로: 원문 토큰(인코더 위치 j) · 세로: 만든 단어(디코더 단계 t) · 칸: 가중치 α<sub>tj</sub>";
    const head = table.createTHead().insertRow();
    const corner = document.createElement("th");
    corner.innerHTML = "<span class='live-axis'>t ↓ · j →</span>";
    head.appendChild(corner);
    for (const word of source) {
      const cell = document.createElement("th");
      cell.scope = "col";
      cell.textContent = word;
      head.appendChild(cell);
    }
    table.createTBody();
    $("table", column).replaceChildren(table);
    return table;
  }

  function drawRow(column, table, t, token, weights, forced) {
    const row = table.tBodies[0].insertRow();
    row.dataset.step = t;
    const label = document.createElement("th");
    label.scope = "row";
    const pick = document.createElement("button");
    pick.type = "button";
    pick.className = "live-step";
    pick.textContent = `${t + 1}. ${vocab.target[token]}${forced ? " ✎" : ""}`;
    pick.title = forced ? "직접 고른 단어(강요)" : "이 단계의 후보 보기";
    pick.addEventListener("click", () => showCandidates(column.dataset.model, t));
    label.appendChild(pick);
    row.appendChild(label);
    if (forced) row.classList.add("forced");
    for (const w of weights) {
      const cell = row.insertCell();
      const v = shade(w);
      cell.style.background = `rgb(${v}, ${v}, ${v})`;
      cell.style.color = w > 0.5 ? "#000" : "#fff";
      cell.textContent = w.toFixed(2);
      cell.title = w.toFixed(6);
    }
  }

  function showCandidates(model, t) {
    const column = root.querySelector(`[data-model-column="${model}"]`);
    const result = current?.results[model];
    const panel = $("candidates", column);
    if (!result || !result.candidates[t]) { panel.replaceChildren(); return; }
    column.querySelectorAll("tr.selected").forEach((row) => row.classList.remove("selected"));
    column.querySelector(`tr[data-step="${t}"]`)?.classList.add("selected");
    const chosen = result.tokens[t];
    const table = document.createElement("table");
    table.className = "live-topk";
    table.dataset.step = t;
    table.createCaption().textContent = `단계 ${t + 1}의 후보 ${TOP_K}개 (로짓 순)`;
    const head = table.createTHead().insertRow();
    for (const title of ["순위", "단어", "로짓", "소프트맥스 확률", ""]) {
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
      row.insertCell().textContent = `${(100 * c.prob).toFixed(1)}%`;
      const force = document.createElement("button");
      force.type = "button";
      force.dataset.live = "force";
      force.textContent = c.token === chosen ? "고른 단어" : "이 단어로 강요";
      force.dataset.off = String(c.token === chosen);
      force.disabled = c.token === chosen || busy > 0;
      force.addEventListener("click", () => forceWord(model, t, c.token));
      row.insertCell().appendChild(force);
    });
    panel.replaceChildren(table);
  }

  // ---------- runs: one at a time; a newer run makes every older one stop drawing ----------

  async function show(model, mine) {
    const column = root.querySelector(`[data-model-column="${model}"]`);
    const forced = current.forced[model] || [];
    const table = drawHeader(column, current.source);
    $("output", column).textContent = "";
    $("candidates", column).replaceChildren();
    const shown = [];
    const result = await decode(model, current.ids, forced, async (t, token, weights, isForced) => {
      if (mine !== run) return false;
      drawRow(column, table, t, token, weights, isForced);
      shown.push(token);
      $("output", column).textContent = words(shown);
      const pause = first ? 0 : Number(root.dataset.stepMs ?? 120);  // let the reader see the rows arrive
      if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
      return mine === run;
    });
    if (!result || mine !== run) return false;
    current.results[model] = result;
    $("output", column).textContent = words(result.tokens);
    $("reset", column).hidden = !forced.length;
    showCandidates(model, Math.min(result.forced, result.tokens.length - 1));
    return true;
  }

  async function runModels(models) {
    const mine = ++run;
    busyOn();
    root.dataset.done = "false";
    try {
      for (const model of models) {
        if (!(await show(model, mine))) return;
      }
      window.liveResult = { tokens: current.results.bahdanau.tokens, weights: current.results.bahdanau.weights,
        source: current.source, luong: current.results.luong ?? null };
      if (first) {
        first = false;
        window.liveFirstTranslationMs = performance.now();  // since the page started loading
        $("latency").textContent = `이 브라우저에서 페이지를 연 뒤 첫 번역까지 ${Math.round(window.liveFirstTranslationMs)} ms`;
      }
    } finally {
      busyOff();
      if (mine === run && !settling) root.dataset.done = "true";
    }
  }

  function translate() {
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
    $("origin").textContent = "";
    if (found.length) {
      const list = document.createElement("ul");
      for (const text of found) list.appendChild(document.createElement("li")).textContent = text;
      message.append("번역하지 않았습니다.", list);
      current = null;
      window.liveResult = { error: found.join(" "), problems: found };
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
      ids: [...normalised.map((w) => vocab.index.get(w)), EOS], source: [...normalised, "<eos>"],
      origin: from.kind, results: {}, forced: {},
    };
    return runModels(Object.keys(MODELS).filter((model) => loaded[model]));
  }
  live.translate = translate;

  function forceWord(model, t, token) {
    if (busy || !current) return;
    current.forced[model] = [...current.results[model].tokens.slice(0, t), token];
    return runModels([model]);
  }
  live.force = forceWord;

  function resetForcing(model) {
    if (busy || !current) return;
    current.forced[model] = [];
    return runModels([model]);
  }

  async function runBeam() {
    if (busy || !current) return;
    const model = $("beam-model").value, k = Number($("beam-k").value);
    const mine = ++run;
    busyOn();
    root.dataset.done = "false";
    try {
      const result = await beam(model, current.ids, k);
      if (mine !== run) return;
      drawBeam(model, k, result);
      window.liveBeam = { model, k, tokens: result.tokens, score: result.score };
    } finally {
      busyOff();
      if (mine === run) root.dataset.done = "true";
    }
  }

  function drawBeam(model, k, result) {
    const box = $("beam-result");
    const list = document.createElement("ol");
    list.className = "live-beam-steps";
    result.steps.forEach((s, t) => {
      const item = list.appendChild(document.createElement("li"));
      item.append(`단계 ${t + 1}: `);
      for (const hyp of s.live) {
        const span = item.appendChild(document.createElement("span"));
        span.className = "live-hyp";
        span.textContent = `${words(hyp.tokens)} (${hyp.score.toFixed(3)})`;
      }
      for (const hyp of s.finished) {
        const span = item.appendChild(document.createElement("span"));
        span.className = "live-hyp finished";
        span.textContent = `${words(hyp.tokens)} <eos> (${hyp.score.toFixed(3)} ÷ ${hyp.tokens.length} = ${hyp.normalised.toFixed(4)})`;
      }
    });
    const final = document.createElement("p");
    final.dataset.live = "beam-output";
    final.innerHTML = "<strong>빔 서치 결과:</strong> ";
    final.append(`${words(result.tokens)} — 길이로 나눈 점수 ${result.score.toFixed(4)} ` +
      `(${MODELS[model].label}, k = ${k}, 길이 벌점 α = ${LENGTH_PENALTY})`);
    box.replaceChildren(final, list);
  }

  // ---------- loading, with progress ----------

  const progress = { files: new Map() };

  const size = (n) => (n < 1e6 ? `${(n / 1e3).toFixed(0)} kB` : `${(n / 1e6).toFixed(1)} MB`);

  function drawProgress() {
    let got = 0, total = 0;
    const parts = [];
    for (const [label, file] of progress.files) {
      got += file.got;
      total += file.total || file.got;
      parts.push(file.total && !file.done ? `${label} ${size(file.got)}/${size(file.total)}` : `${label} ${size(file.got)}`);
    }
    const bar = $("progress-bar");
    bar.max = Math.max(total, 1);
    bar.value = got;
    const pending = [...progress.files.values()].some((file) => !file.done);
    bar.hidden = !pending;
    $("progress-note").hidden = !pending;
    $("progress-text").textContent = pending
      ? `불러오는 중 ${size(got)}/${size(total)}: ${parts.join(" · ")}`
      : `불러온 파일 ${size(got)}: ${parts.join(" · ")}`;
    root.dataset.downloaded = got;
  }

  function counted(response, label) {  // the response's body, read through a counter that the progress line shows
    const file = { got: 0, total: Number(response.headers.get("Content-Length")) || 0, done: false };
    progress.files.set(label, file);
    drawProgress();
    const reader = response.body.getReader();
    return new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          file.done = true;
          controller.close();
          drawProgress();
        } else {
          file.got += value.length;
          controller.enqueue(value);
          laterProgress();
        }
      },
    });
  }

  let frame = 0;
  function laterProgress() {  // at most once a frame: a redraw per 64 kB chunk would cost the first translation
    frame ||= requestAnimationFrame(() => { frame = 0; drawProgress(); });
  }

  async function download(path, label) {
    const response = await fetch(`${base}${path}`);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return new Uint8Array(await new Response(counted(response, label)).arrayBuffer());
  }

  // onnxruntime-web fetches its WebAssembly binary itself and compiles it while the bytes arrive. So that the
  // progress line can count those bytes too, fetch is wrapped until the runtime is up: the runtime gets the real
  // response, its body read through the counter.
  function countRuntimeFetch() {
    const original = window.fetch;
    window.fetch = async (input, init) => {
      const response = await original(input, init);
      if (!String(input).endsWith("ort-wasm.wasm") || !response.ok) return response;
      const body = counted(response, "실행기 ort-wasm.wasm");
      return new Response(body, { status: response.status, headers: response.headers });
    };
    return () => { window.fetch = original; };
  }

  const text = (bytes) => JSON.parse(new TextDecoder().decode(bytes));

  function fetchModel(model) {  // the two graphs' bytes, as two promises
    const dir = MODELS[model].dir;
    return ["encoder", "step"].map((part) => download(`${dir}${part}.onnx`, `${model} ${part}.onnx`));
  }

  async function openModel(model, [encoder, step]) {  // the first session made also starts the runtime
    const encoderSession = await ort.InferenceSession.create(await encoder);
    loaded[model] = { encoder: encoderSession, step: await ort.InferenceSession.create(await step) };
    live.times[model] = performance.now();
    root.dataset[model] = "ready";
  }

  function fillKnowledge() {
    $("known").textContent = `학습 문장 ${splits.train.size.toLocaleString()}개, 원문 어휘 ${vocab.source.length.toLocaleString()}` +
      `개, 토큰 ${vocab.max_words}개까지(마침표 포함)`;
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
      button.addEventListener("click", () => { $("input").value = sentence; translate(); });
    }
  }

  async function start() {
    ort.env.wasm.simd = false;  // only ort-wasm.wasm is vendored (the smallest build)
    ort.env.wasm.numThreads = 1;
    busyOn();
    const restoreFetch = countRuntimeFetch();
    ort.env.wasm.wasmPaths = `${base}onnxruntime-web/`;
    try {
      const bahdanau = openModel("bahdanau", fetchModel("bahdanau"));  // starts as soon as the encoder's bytes are in
      const [vocabBytes, sentenceBytes] = await Promise.all([
        download("live/vocabularies.json", "어휘 vocabularies.json"),
        download("live/sentences.json", "문장 목록 sentences.json"),
      ]);
      const data = text(vocabBytes), sentences = text(sentenceBytes);
      vocab = { ...data, index: new Map(data.source.map((w, i) => [w, i])) };
      splits = { train: new Set(sentences.train), held_out: new Set(sentences.held_out) };
      fillKnowledge();
      await bahdanau;
    } catch (error) {
      $("message").textContent = `모델을 불러오지 못했습니다(${error}). 파일로 연 페이지(file://)에서는 브라우저가 모델 파일을 읽지 못하게 막습니다. mkdocs serve나 게시된 사이트에서 여세요.`;
      $("progress").hidden = true;
      root.dataset.ready = "error";
      busyOff();
      return;
    } finally {
      restoreFetch();
    }
    $("form").addEventListener("submit", (event) => { event.preventDefault(); translate(); });
    $("beam-run").addEventListener("click", runBeam);
    root.querySelectorAll("[data-model-column]").forEach((column) => {
      $("reset", column).addEventListener("click", () => resetForcing(column.dataset.modelColumn));
    });
    root.dataset.ready = "true";
    busyOff();
    if (root.dataset.autostart !== "false") await translate();
    try {
      await openModel("luong", fetchModel("luong"));  // after the first translation: it competes with nothing
      while (busy) await new Promise((resolve) => setTimeout(resolve, 50));  // a run in progress finishes first
      enableControls();  // the Luong controls too, now
      if (current && !current.results.luong) await runModels(["luong"]);
    } catch (error) {
      $("message").textContent = `루옹 모델을 불러오지 못했습니다(${error}).`;
    } finally {
      settling = false;
      if (!busy) root.dataset.done = "true";
    }
  }
  start();
})();
