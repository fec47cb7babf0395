// The live page's translator in plain JavaScript: the encoder and one decoder step of the package's models, over
// typed arrays, from the weights file `seq2seq-attention export-weights` writes (weights.bin, version 2: gzip of a
// uint32 header length, a JSON header naming each tensor, its shape and encoding, then the tensors). Each function
// mirrors the PyTorch code it names; sums run in float64, weights are float32 as in PyTorch.
(() => {
  // ---------- the weights file ----------

  // float16 bit patterns to float32, exactly: n values whose low bytes are at payload[at], payload[at + stride], ...
  // and high bytes at payload[high], payload[high + stride], ... A normal float16 is the same number as the float32
  // with its sign, its exponent rebiased (15 -> 127) and its fraction shifted into place.
  function halves(payload, at, high, stride, out) {
    const bits = new Uint32Array(out.buffer, out.byteOffset, out.length);
    for (let i = 0; i < out.length; i++) {
      const h = payload[at + stride * i] | (payload[high + stride * i] << 8);
      const sign = (h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
      if (exponent === 0) out[i] = (sign ? -1 : 1) * fraction * 2 ** -24;  // zero and the subnormals
      else if (exponent === 31) out[i] = fraction ? NaN : sign ? -Infinity : Infinity;
      else bits[i] = sign | ((exponent + 112) << 23) | (fraction << 13);
    }
    return out;
  }

  // The file's bytes unpacked. Bytes without the gzip magic number are unpacked already: by the page's loader
  // (overrides/main.html), which unpacks the file as it arrives, or by the browser, from a server that sent the file
  // gzip-encoded. The bytes are in memory: the stream runs in one go, without waiting for the browser's other work.
  async function unpack(bytes) {
    if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
    const reader = new ReadableStream({ start(controller) { controller.enqueue(bytes); controller.close(); } })
      .pipeThrough(new DecompressionStream("gzip")).getReader();
    const chunks = [];
    for (let read; !(read = await reader.read()).done;) chunks.push(read.value);
    const data = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
    chunks.reduce((at, chunk) => (data.set(chunk, at), at + chunk.length), 0);
    return data;
  }

  // float16: two byte planes (low bytes, high bytes). int8 (R, C) with "block": b: the int8 values row by row, then one
  // float16 scale per b columns of a row, then the float16 values of the rows listed in "float16_rows" (if any).
  // A tensor is {shape, values, row(r)}; an int8 one becomes float32 when first used (`values`), and `row` of an
  // int8 embedding reads one row, so that the rows of the words never used are never made.
  function tensor(payload, entry) {
    const count = entry.shape.reduce((a, b) => a * b, 1), at = entry.offset;
    const [rows, columns = 1] = entry.shape;
    if (entry.encoding === "float16") {
      const values = halves(payload, at, at + count, 1, new Float32Array(count));
      return { shape: entry.shape, values, row: (r) => values.subarray(r * columns, (r + 1) * columns) };
    }
    if (entry.encoding !== "int8") throw new Error(`${entry.name}: unknown encoding ${entry.encoding}`);
    const blocks = count / entry.block;
    const int8 = {
      payload, columns, block: entry.block,
      q: new Int8Array(payload.buffer, payload.byteOffset + at, count),
      scales: halves(payload, at + count, at + count + 1, 2, new Float32Array(blocks)),
      kept: new Map((entry.float16_rows || []).map((r, n) => [r, at + count + 2 * blocks + 2 * n * columns])),
    };
    let values = null;
    return {
      shape: entry.shape,
      get values() { return (values ??= dequantize(int8, 0, rows)); },
      row: (r) => (values ? values.subarray(r * columns, (r + 1) * columns) : dequantize(int8, r, r + 1)),
    };
  }

  function dequantize({ payload, columns, block, q, scales, kept }, from, to) {  // rows from .. to-1 as float32
    const out = new Float32Array((to - from) * columns), shift = from * columns;
    for (let r = from; r < to; r++) {
      const start = r * columns - shift;
      if (kept.has(r)) halves(payload, kept.get(r), kept.get(r) + 1, 2, out.subarray(start, start + columns));
      else {
        for (let k = (r * columns) / block; k < ((r + 1) * columns) / block; k++) {  // block k: b columns of row r
          const scale = scales[k];
          for (let i = k * block; i < (k + 1) * block; i++) out[i - shift] = q[i] * scale;  // a float32 product
        }
      }
    }
    return out;
  }

  async function load(bytes) {  // the model: its architecture (header.model) and every tensor by its PyTorch name
    const data = await unpack(bytes);
    const length = new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true);
    const header = JSON.parse(new TextDecoder().decode(data.subarray(4, 4 + length)));
    if (header.format !== "seq2seq-attention/weights" || header.version !== 2) {
      throw new Error("not a seq2seq-attention weights file of version 2 (export-weights writes it)");
    }
    const payload = data.subarray(4 + length);
    const weights = {};
    for (const entry of header.tensors) weights[entry.name] = tensor(payload, entry);
    return { ...header.model, weights };
  }

  // ---------- layers ----------

  function linear(w, b, x, out = new Float64Array(w.shape[0])) {  // nn.Linear: out = W x + b, W (R, C)
    const [rows, columns] = w.shape, W = w.values, bias = b ? b.values : null;
    const body = columns - (columns % 4);
    let r = 0;
    // Two rows at a time, four partial sums each: eight multiply-adds per turn that do not wait for each other, and
    // each x[c] read once for both rows (about three times as fast in V8 as one sum per row).
    for (; r + 1 < rows; r += 2) {
      const p = r * columns, q = p + columns;
      let a0 = bias ? bias[r] : 0, a1 = 0, a2 = 0, a3 = 0;
      let b0 = bias ? bias[r + 1] : 0, b1 = 0, b2 = 0, b3 = 0;
      let c = 0;
      for (; c < body; c += 4) {
        const x0 = x[c], x1 = x[c + 1], x2 = x[c + 2], x3 = x[c + 3];
        a0 += W[p + c] * x0; a1 += W[p + c + 1] * x1; a2 += W[p + c + 2] * x2; a3 += W[p + c + 3] * x3;
        b0 += W[q + c] * x0; b1 += W[q + c + 1] * x1; b2 += W[q + c + 2] * x2; b3 += W[q + c + 3] * x3;
      }
      for (; c < columns; c++) { a0 += W[p + c] * x[c]; b0 += W[q + c] * x[c]; }
      out[r] = a0 + a1 + a2 + a3;
      out[r + 1] = b0 + b1 + b2 + b3;
    }
    for (; r < rows; r++) {  // an odd last row
      let sum = bias ? bias[r] : 0;
      for (let c = 0, at = r * columns; c < columns; c++) sum += W[at + c] * x[c];
      out[r] = sum;
    }
    return out;
  }

  const row = (embedding, token) => Float64Array.from(embedding.row(token));  // nn.Embedding
  const sigmoid = (x) => 1 / (1 + Math.exp(-x));
  const concat = (a, b) => { const out = new Float64Array(a.length + b.length); out.set(a); out.set(b, a.length); return out; };

  // --8<-- [start:gru_cell]
  // nn.GRU, one step of the GRU `gru` ("decoder.gru"; the suffix "_l0_reverse" names a backward direction): the rows
  // of weight_ih and weight_hh are the reset, update and new gates (r, z, n).
  function gruCell(model, gru, x, h, suffix = "_l0") {
    const w = model.weights, H = h.length;
    const tensor = (name) => w[`${gru}.${name}${suffix}`];
    const gi = linear(tensor("weight_ih"), tensor("bias_ih"), x);  // W_i x + b_i, (3H)
    const gh = linear(tensor("weight_hh"), tensor("bias_hh"), h);  // W_h h + b_h, (3H)
    const next = new Float64Array(H);
    for (let i = 0; i < H; i++) {
      const r = sigmoid(gi[i] + gh[i]);  // reset gate
      const z = sigmoid(gi[H + i] + gh[H + i]);  // update gate
      const n = Math.tanh(gi[2 * H + i] + r * gh[2 * H + i]);  // candidate state
      next[i] = (1 - z) * n + z * h[i];  // h' = (1 - z) * n + z * h
    }
    return next;
  }
  // --8<-- [end:gru_cell]

  // ---------- the encoder: keys (S, H), the decoder's first state, the keys projected once ----------

  function encode(model, ids) {
    const w = model.weights, H = model.hidden_size;
    const embedded = ids.map((id) => row(w["encoder.embedding.weight"], id));  // S x (H)
    const directions = model.bidirectional ? 2 : 1, size = H / directions;
    const run = (suffix, order) => {  // one direction of the encoder's GRU over the sentence, in `order`
      let h = new Float64Array(size);
      const outputs = [];
      for (const j of order) outputs[j] = h = gruCell(model, "encoder.gru", embedded[j], h, suffix);
      return { outputs, last: h };
    };
    const positions = ids.map((_, j) => j);
    const forward = run("_l0", positions);
    const backward = model.bidirectional ? run("_l0_reverse", [...positions].reverse()) : null;
    const keys = positions.map((j) => (backward ? concat(forward.outputs[j], backward.outputs[j]) : forward.outputs[j]));
    const hidden = backward ? concat(forward.last, backward.last) : forward.last;  // join_directions: [forward; backward]
    return { keys, hidden, projKeys: keys.map((k) => projectKeys(model, k)) };
  }

  // ---------- scores: project_keys once per sentence, score at every step ----------

  function projectKeys(model, key) {
    const w = model.weights;
    if (model.score === "additive") return linear(w["decoder.attention.Ua.weight"], w["decoder.attention.Ua.bias"], key);
    if (model.score === "general") return linear(w["decoder.attention.W.weight"], null, key);
    return key;  // dot, scaled dot: the keys themselves
  }

  // --8<-- [start:score]
  function score(model, query, projKeys) {  // e_tj for every source position j
    const w = model.weights;
    if (model.score === "additive") {  // v_a^T tanh(W_a q + U_a k_j)
      const q = linear(w["decoder.attention.Wa.weight"], w["decoder.attention.Wa.bias"], query);
      const va = w["decoder.attention.Va.weight"].values, vb = w["decoder.attention.Va.bias"].values[0];
      return projKeys.map((k) => {
        let sum = vb;
        for (let i = 0; i < q.length; i++) sum += va[i] * Math.tanh(q[i] + k[i]);
        return sum;
      });
    }
    const scale = model.score === "scaled_dot" ? Math.sqrt(query.length) : 1;  // q . k, or q . k / sqrt(H)
    return projKeys.map((k) => {
      let sum = 0;
      for (let i = 0; i < query.length; i++) sum += query[i] * k[i];
      return sum / scale;
    });
  }

  function attend(scores, keys) {  // the softmax over S (one sentence: nothing is masked) and the weighted sum
    const max = Math.max(...scores);
    const exps = scores.map((e) => Math.exp(e - max));
    const total = exps.reduce((a, b) => a + b, 0);
    const weights = exps.map((e) => e / total);
    const context = new Float64Array(keys[0].length);
    keys.forEach((k, j) => { for (let i = 0; i < k.length; i++) context[i] += weights[j] * k[i]; });
    return { context, weights };
  }
  // --8<-- [end:score]

  // ---------- one decoder step: token and state to logits, the next state, weights and scores ----------

  // --8<-- [start:step]
  function step(model, encoded, state, token) {
    const w = model.weights;
    let embedded = row(w["decoder.embedding.weight"], token);  // dropout: none at inference
    if (model.decoder === "bahdanau") {  // AttnDecoderRNN.step: attend with s_{t-1}, then the GRU
      const scores = score(model, state.hidden, encoded.projKeys);
      const { context, weights } = attend(scores, encoded.keys);
      const hidden = gruCell(model, "decoder.gru", concat(embedded, context), state.hidden);  // s_t
      const logits = linear(w["decoder.out.weight"], w["decoder.out.bias"], hidden);
      return { logits, state: { hidden }, weights, scores };
    }
    embedded = embedded.map((x) => Math.max(x, 0));  // LuongAttnDecoderRNN.embed: ReLU
    const input = model.input_feeding ? concat(embedded, state.feed) : embedded;  // the token and h~_{t-1}
    const hidden = gruCell(model, "decoder.gru", input, state.hidden);  // s_t first
    const scores = score(model, hidden, encoded.projKeys);  // then attend with s_t
    const { context, weights } = attend(scores, encoded.keys);
    const attentional = linear(w["decoder.concat.weight"], w["decoder.concat.bias"], concat(context, hidden))
      .map(Math.tanh);  // h~_t = tanh(W_c [c_t; s_t])
    const logits = linear(w["decoder.out.weight"], w["decoder.out.bias"], attentional);
    return { logits, state: { hidden, feed: model.input_feeding ? attentional : null }, weights, scores };
  }
  // --8<-- [end:step]

  function initState(model, encoded) {  // StepDecoder.init_state: s_0, and zeros for input feeding's h~_0
    return { hidden: encoded.hidden, feed: model.input_feeding ? new Float64Array(model.hidden_size) : null };
  }

  // load: the file's bytes (as fetched, or unpacked) to the model.
  window.liveModel = { load, encode, initState, step };
})();
