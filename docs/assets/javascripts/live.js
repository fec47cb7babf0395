// The live translator: the packaged Bahdanau model (ONNX, float16 weights) run by onnxruntime-web in the page.
// Normalisation and unknown-word handling follow the Python side (translation/corpus.py, search.py).
(() => {
  const root = document.getElementById("live-translator");
  if (!root) return;
  const EOS = 2, SOS = 1, UNK = 3;
  const $ = (name) => root.querySelector(`[data-live="${name}"]`);
  const started = performance.now();
  let sessions = null, vocab = null, first = true;

  function normalize(sentence) {  // normalize_string: lowercase, drop accents, split off .!?, other non-letters -> space
    let s = sentence.toLowerCase().trim().normalize("NFD").replace(/\p{Mn}/gu, "");
    s = s.replace(/([.!?])/g, " $1");
    return s.replace(/[^a-zA-Z.!?]+/g, " ");
  }

  function problem(sentence) {  // the checks of prepare_sentences, in Korean
    const foreign = [...new Set([...sentence].filter((c) => /\p{L}/u.test(c) && !/\p{Script=Latin}/u.test(c)))];
    if (foreign.length) return `라틴 문자가 아닌 글자(${foreign.join("")})가 있습니다. 모델은 프랑스어를 읽습니다.`;
    const words = normalize(sentence).trim().split(/\s+/).filter(Boolean);
    if (!words.length) return "빈 문장입니다. 프랑스어 문장을 입력하세요.";
    if (words.length > vocab.max_words) return `정규화한 뒤 ${words.length}단어입니다. 모델은 ${vocab.max_words}단어까지 학습했습니다.`;
    const unknown = words.filter((w) => !vocab.index.has(w));
    if (unknown.length) return `사전에 없는 단어: ${unknown.map((w) => `'${w}'`).join(", ")}. 학습 문장에 나온 단어만 알아봅니다.`;
    return null;
  }

  function argmax(values) {
    let best = 0;
    for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
    return best;
  }

  function drawHeader(sourceWords) {
    const table = $("heatmap");
    table.innerHTML = "";
    const head = table.insertRow();
    head.insertCell().textContent = "";
    for (const word of sourceWords) {
      const cell = document.createElement("th");
      cell.textContent = word;
      head.appendChild(cell);
    }
  }

  function drawRow(word, weights) {
    const row = $("heatmap").insertRow();
    const label = document.createElement("th");
    label.textContent = word;
    row.appendChild(label);
    for (const w of weights) {
      const cell = row.insertCell();
      const shade = Math.round(255 * (1 - w));
      cell.style.background = `rgb(${shade}, ${shade}, ${shade})`;  // dark = 1, like the figures' bright = 1 inverted for text
      cell.style.color = w > 0.5 ? "#fff" : "#000";
      cell.textContent = w.toFixed(2);
      cell.title = w.toFixed(6);
    }
  }

  async function translate() {
    const sentence = $("input").value;
    root.dataset.done = "false";
    $("message").textContent = "";
    $("output").textContent = "";
    $("heatmap").innerHTML = "";
    const trouble = problem(sentence);
    if (trouble) {
      $("message").textContent = trouble;
      window.liveResult = { error: trouble };
      root.dataset.done = "true";
      return;
    }
    const words = normalize(sentence).trim().split(/\s+/);
    const ids = [...words.map((w) => vocab.index.get(w)), EOS];
    const sourceWords = [...words, "<eos>"];
    drawHeader(sourceWords);
    const tokens = new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    const encoded = await sessions.encoder.run({ tokens });
    let hidden = encoded.hidden, token = SOS;
    const output = [], weightRows = [];
    for (let step = 0; step < vocab.max_length; step++) {
      const result = await sessions.step.run({
        token: new ort.Tensor("int64", BigInt64Array.from([BigInt(token)]), [1, 1]),
        hidden, keys: encoded.keys, proj_keys: encoded.proj_keys,
      });
      token = argmax(result.logits.data);
      const weights = Array.from(result.weights.data);
      output.push(token);
      weightRows.push(weights);
      const word = vocab.target[token];
      drawRow(word, weights);
      if (token === EOS) break;
      $("output").textContent = output.map((t) => vocab.target[t]).join(" ");
      hidden = result.next_hidden;
      const pause = first ? 0 : Number(root.dataset.stepMs ?? 120);  // let the reader see the rows arrive
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    $("output").textContent = output.filter((t) => t !== EOS).map((t) => vocab.target[t]).join(" ");
    window.liveResult = { tokens: output, weights: weightRows, source: sourceWords };
    if (first) {
      first = false;
      $("latency").textContent = `이 브라우저에서 페이지를 연 뒤 첫 번역까지 ${Math.round(performance.now() - started)} ms`;
      window.liveFirstTranslationMs = performance.now() - started;
    }
    root.dataset.done = "true";
  }

  async function start() {
    const base = root.dataset.base;
    ort.env.wasm.wasmPaths = `${base}onnxruntime-web/`;
    ort.env.wasm.simd = false;  // only ort-wasm.wasm is vendored (the smallest build)
    ort.env.wasm.numThreads = 1;
    try {
      const [response, encoder, step] = await Promise.all([
        fetch(`${base}live/vocabularies.json`),
        ort.InferenceSession.create(`${base}live/encoder.onnx`),
        ort.InferenceSession.create(`${base}live/step.onnx`),
      ]);
      const data = await response.json();
      vocab = { ...data, index: new Map(data.source.map((w, i) => [w, i])), max_words: data.max_words };
      sessions = { encoder, step };
    } catch (error) {
      $("message").textContent = `모델을 불러오지 못했습니다(${error}). 파일로 연 페이지(file://)에서는 브라우저가 모델 파일을 읽지 못하게 막습니다. mkdocs serve나 게시된 사이트에서 여세요.`;
      root.dataset.ready = "error";
      return;
    }
    $("button").disabled = false;
    $("button").addEventListener("click", translate);
    $("input").addEventListener("keydown", (event) => { if (event.key === "Enter") translate(); });
    root.dataset.ready = "true";
    if (root.dataset.autostart !== "false") translate();
  }
  start();
})();
