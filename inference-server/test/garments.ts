/**
 * Garment photos made for the try-on tests (no garment photo with a clean licence was at hand):
 * flat product shots drawn with sharp from SVG, a plain light background, a printed pattern so a
 * warp shows. Provenance: test/fixtures/README.md ("Made garments").
 */
import sharp from 'sharp'

/** A T-shirt, front on: navy with white stripes and a red round logo, on light grey, 600×640. */
export function tshirtSvg(): string {
  const shirt =
    'M 215 60 Q 300 120 385 60 L 470 95 L 570 215 L 490 275 L 450 230 L 450 600 L 150 600 L 150 230 L 110 275 L 30 215 L 130 95 Z'
  const stripes = Array.from(
    { length: 14 },
    (_, i) => `<rect x="0" y="${70 + i * 40}" width="600" height="14" fill="#f4f4f4"/>`,
  )
  return `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="640">
  <rect width="600" height="640" fill="#e9e9e6"/>
  <defs><clipPath id="shirt"><path d="${shirt}"/></clipPath></defs>
  <g clip-path="url(#shirt)">
    <rect width="600" height="640" fill="#1f3a68"/>
    ${stripes.join('\n    ')}
    <circle cx="300" cy="250" r="62" fill="#d8342b"/>
    <text x="300" y="272" font-family="sans-serif" font-size="64" font-weight="bold" text-anchor="middle" fill="#ffffff">42</text>
  </g>
  <path d="${shirt}" fill="none" stroke="#15294a" stroke-width="4"/>
</svg>`
}

/** Trousers, front on: khaki with a dark belt band, on light grey, 500×800. */
export function trousersSvg(): string {
  const legs = 'M 130 40 L 370 40 L 420 760 L 280 760 L 250 300 L 220 760 L 80 760 Z'
  return `<svg xmlns="http://www.w3.org/2000/svg" width="500" height="800">
  <rect width="500" height="800" fill="#ecebe8"/>
  <path d="${legs}" fill="#b59a6a" stroke="#7d6841" stroke-width="4"/>
  <rect x="130" y="40" width="240" height="36" fill="#4a3b25"/>
</svg>`
}

/**
 * A sleeveless shift dress, front on: straight sides (so its hem width is its shoulder width, which
 * is how garment.ts reads a body), a scooped neckline, red with white dots, on light grey, 480×900.
 */
export function dressSvg(): string {
  const dress = 'M 130 40 L 190 40 Q 240 130 290 40 L 350 40 L 350 860 L 130 860 Z'
  const dots = Array.from({ length: 13 }, (_, j) =>
    Array.from(
      { length: 5 },
      (_, i) => `<circle cx="${150 + i * 45 + (j % 2) * 22}" cy="${90 + j * 60}" r="11" fill="#fff4f0"/>`,
    ).join(''),
  )
  return `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="900">
  <rect width="480" height="900" fill="#e9e9e6"/>
  <defs><clipPath id="dress"><path d="${dress}"/></clipPath></defs>
  <g clip-path="url(#dress)">
    <rect width="480" height="900" fill="#b8262f"/>
    ${dots.join('\n    ')}
  </g>
  <path d="${dress}" fill="none" stroke="#6e141a" stroke-width="4"/>
</svg>`
}

export const renderSvg = (svg: string): Promise<Buffer> => sharp(Buffer.from(svg)).png().toBuffer()
export const makeTshirt = () => renderSvg(tshirtSvg())
export const makeTrousers = () => renderSvg(trousersSvg())
export const makeDress = () => renderSvg(dressSvg())
