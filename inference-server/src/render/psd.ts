/**
 * The PSD export (DESIGN.md §3 Exports), written with ag-psd from raw pixels (`imageData`; no
 * canvas library): a document of the rendered size whose layers are, bottom to top,
 *
 * - `Background`: the recipe's colour, only when it has one;
 * - `Original`: the photo over the rendered area, hidden, for going back to it;
 * - `Cutout`: the same photo with the revision as its layer mask, so the edit stays editable.
 *
 * The composite image (what viewers without layer support show) is the PNG export's render.
 * Documents over 30,000 px on a side are written as PSB, as Photoshop requires.
 */
import { type Layer, writePsdUint8Array } from 'ag-psd'
import { composite, type Layers, photoCoverage, type Rgba } from './canvas.js'

/** The largest side a PSD (not PSB) may have. */
const PSD_MAX_SIDE = 30_000

/** Interleaves RGB and one alpha plane into RGBA. */
function rgbaOf(rgb: Uint8Array, alpha: Uint8Array): Uint8Array {
  const out = new Uint8Array(alpha.length * 4)
  for (let k = 0, i = 0, j = 0; k < alpha.length; k++, i += 3, j += 4) {
    out[j] = rgb[i]
    out[j + 1] = rgb[i + 1]
    out[j + 2] = rgb[i + 2]
    out[j + 3] = alpha[k]
  }
  return out
}

/** A layer mask's pixels: ag-psd reads the first channel of RGBA data. */
function maskImage(alpha: Uint8Array): Uint8Array {
  const out = new Uint8Array(alpha.length * 4)
  for (let k = 0, j = 0; k < alpha.length; k++, j += 4) {
    out[j] = alpha[k]
    out[j + 1] = alpha[k]
    out[j + 2] = alpha[k]
    out[j + 3] = 255
  }
  return out
}

function colourLayer(width: number, height: number, bg: Rgba): Layer {
  const data = new Uint8Array(width * height * 4)
  for (let j = 0; j < data.length; j += 4) {
    data[j] = bg.r
    data[j + 1] = bg.g
    data[j + 2] = bg.b
    data[j + 3] = bg.a
  }
  return { name: 'Background', top: 0, left: 0, imageData: { data, width, height } }
}

/**
 * Writes the layered document.
 * @example encodePsd(layers, null) // Uint8Array of a PSD with layers Original and Cutout
 */
export function encodePsd(layers: Layers, bg: Rgba | null): Uint8Array {
  const { width, height, rgb, alpha } = layers
  // One photo layer's pixels serve both photo layers: ag-psd only reads them.
  const photo = { data: rgbaOf(rgb, photoCoverage(layers)), width, height }
  const children: Layer[] = [
    ...(bg ? [colourLayer(width, height, bg)] : []),
    { name: 'Original', hidden: true, top: 0, left: 0, imageData: photo },
    {
      name: 'Cutout',
      top: 0,
      left: 0,
      imageData: photo,
      mask: { top: 0, left: 0, defaultColor: 0, imageData: { data: maskImage(alpha), width, height } },
    },
  ]
  const psd = { width, height, children, imageData: { data: composite(layers, bg), width, height } }
  // noBackground: the bottom layer stays a normal layer (Photoshop would lock an opaque one as "Background").
  return writePsdUint8Array(psd, { noBackground: true, psb: width > PSD_MAX_SIDE || height > PSD_MAX_SIDE })
}
