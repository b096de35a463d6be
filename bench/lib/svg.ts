/** A small hand-written SVG bar chart: one group of bars per image, a dashed line per target. */

export interface Series {
  label: string
  color: string
}
export interface Group {
  label: string
  values: Array<number | null>
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function barChart({
  title,
  subtitle,
  series,
  groups,
  lines = [],
  unit = '×',
}: {
  title: string
  subtitle: string
  series: Series[]
  groups: Group[]
  lines?: Array<{ value: number; label: string }>
  /** Suffix of the axis labels (ratios by default). */
  unit?: string
}): string {
  const bar = 17
  const gap = 20
  const left = 44
  const top = 56
  const plotH = 220
  const groupW = series.length * bar + gap
  const width = Math.max(560, left + groups.length * groupW + 20)
  const height = top + plotH + 40 + 18 * Math.ceil((series.length + lines.length) / 3)
  const maxV =
    Math.max(
      1.5,
      ...groups.flatMap((g) => g.values.filter((v): v is number => v !== null)),
      ...lines.map((l) => l.value),
    ) * 1.1
  const y = (v: number) => top + plotH - (v / maxV) * plotH
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="11">`,
  )
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`)
  out.push(`<text x="${left}" y="20" font-size="14" font-weight="600">${esc(title)}</text>`)
  out.push(`<text x="${left}" y="38" fill="#555">${esc(subtitle)}</text>`)
  const step = maxV > 40 ? 20 : maxV > 10 ? 5 : maxV > 4 ? 1 : 0.5
  for (let v = 0; v <= maxV; v += step) {
    out.push(`<line x1="${left}" x2="${width - 10}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`)
    out.push(`<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#777">${v}${unit}</text>`)
  }
  groups.forEach((g, gi) => {
    const x0 = left + 10 + gi * groupW
    g.values.forEach((v, si) => {
      if (v === null) return
      const x = x0 + si * bar
      out.push(
        `<rect x="${x}" y="${y(v).toFixed(1)}" width="${bar - 2}" height="${(top + plotH - y(v)).toFixed(1)}" fill="${series[si].color}"><title>${esc(`${g.label} · ${series[si].label}: ${v.toFixed(2)}${unit}`)}</title></rect>`,
      )
      out.push(
        `<text x="${x + (bar - 2) / 2}" y="${(y(v) - 3).toFixed(1)}" text-anchor="middle" font-size="8" fill="#333">${v.toFixed(v >= 10 ? 0 : 1)}</text>`,
      )
    })
    out.push(
      `<text x="${x0 + (series.length * bar) / 2}" y="${top + plotH + 14}" text-anchor="middle">${esc(g.label)}</text>`,
    )
  })
  for (const l of lines) {
    out.push(
      `<line x1="${left}" x2="${width - 10}" y1="${y(l.value).toFixed(1)}" y2="${y(l.value).toFixed(1)}" stroke="#c00" stroke-dasharray="4 3"/>`,
    )
  }
  const legend = (i: number) => ({ x: left + (i % 3) * 190, y: top + plotH + 34 + 18 * Math.floor(i / 3) })
  series.forEach((s, i) => {
    const { x, y: ly } = legend(i)
    out.push(
      `<rect x="${x}" y="${ly - 9}" width="10" height="10" fill="${s.color}"/><text x="${x + 14}" y="${ly}">${esc(s.label)}</text>`,
    )
  })
  lines.forEach((l, j) => {
    const { x, y: ly } = legend(series.length + j)
    out.push(
      `<line x1="${x}" x2="${x + 10}" y1="${ly - 4}" y2="${ly - 4}" stroke="#c00" stroke-dasharray="3 2"/><text x="${x + 14}" y="${ly}" fill="#c00">${esc(l.label)}</text>`,
    )
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
