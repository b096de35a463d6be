import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { makeComposites } from './quality.js';
import { sharp } from './lib/deps.js';
import { fixturePhoto, FIXTURE_PHOTOS } from './lib/images.js';
import { refineMask } from '../inference-server/src/imaging/refine.js';
import { toSourceMask } from '../inference-server/src/segmentation/postprocess.js';
import { decodeImage } from '../inference-server/src/imaging/decode.js';
const dir = 'bench/.state/masks'; mkdirSync(dir, { recursive: true });
const masks = new Map();
for (const name of FIXTURE_PHOTOS) {
  const f = `${dir}/${name}.raw`;
  if (!existsSync(f)) { const { createSegmenter } = await import('../inference-server/src/segmentation/index.js'); const seg = await createSegmenter(); const { image } = await decodeImage((await fixturePhoto(name)).bytes); writeFileSync(f, (await seg.segment(image)).data); await seg.close(); }
  const p = await fixturePhoto(name); masks.set(name, { data: new Uint8Array(readFileSync(f)), width: p.width, height: p.height });
}
const size = (process.env.SIZE ?? '4mp') as any;
const comps = await makeComposites(masks, [size]);
const variants: [string, any][] = JSON.parse(process.env.V ?? '[["colour 1e-4",{}],["colour 1e-3",{"eps":1e-3}],["colour 1e-2",{"eps":1e-2}],["grey 1e-3",{"guide":"grey","eps":1e-3}],["colour r2x 1e-3",{"eps":1e-3,"rmul":2}],["colour r0.5x 1e-3",{"eps":1e-3,"rmul":0.5}]]');
const tot: Record<string, number> = {};
for (const c of comps) {
  const { image } = await decodeImage(c.bytes);
  const a8 = new Uint8Array(c.alpha.length); for (let i = 0; i < a8.length; i++) a8[i] = Math.round(c.alpha[i] * 255);
  const small = await sharp(a8, { raw: { width: c.width, height: c.height, channels: 1 } }).resize(1024, 1024, { fit: 'fill' }).toColourspace('b-w').raw().toBuffer();
  const mask = { data: toSourceMask(Float32Array.from(small, (v) => v / 255), 1024, c.width, c.height), width: c.width, height: c.height };
  const sad = (m: Uint8Array) => { let s = 0; for (let i = 0; i < m.length; i++) s += Math.abs(m[i] / 255 - c.alpha[i]); return s / 1000; };
  const row = [`${c.name} balanced ${sad(mask.data).toFixed(2)}`];
  tot.balanced = (tot.balanced ?? 0) + sad(mask.data);
  for (const [label, o] of variants) {
    const r = o.rmul ? { ...o, radius: o.rmul * Math.max(4, 4 * Math.max(c.width, c.height) / 1024) } : o;
    const t = performance.now(); const out = await refineMask(image, mask, r); const ms = performance.now() - t;
    row.push(`${label} ${sad(out.data).toFixed(2)} (${ms.toFixed(0)}ms)`); tot[label] = (tot[label] ?? 0) + sad(out.data);
  }
  console.log(row.join(' | '));
}
console.log(Object.entries(tot).map(([k, v]) => `${k}: ${v.toFixed(2)}`).join(' | '));
