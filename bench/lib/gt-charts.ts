/**
 * The committed charts of the ground-truth benchmark (numbers only, no pixels of the photos): per
 * group, each pair's SAD (IoU lost, 1 − IoU, on COCO) for `fast` cross-validated, `balanced` and `high`
 * cross-validated; and the groups' means. docs/quality/gt-<group>.svg, docs/quality/gt-groups.svg.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { GROUPS } from './gt-score.js'
import type { PairRow } from './gt-report.js'
import { barChart } from './svg.js'

const DIR = fileURLToPath(new URL('../../docs/quality/', import.meta.url))
const SERIES = [
  { key: 'fastCv', label: 'fast (cross-validated)', color: '#8ecae6' },
  { key: 'balanced', label: 'balanced', color: '#219ebc' },
  { key: 'highCv', label: 'high (cross-validated)', color: '#fb8500' },
]

const lossOf = (r: PairRow, m: string) => r.scores[m]?.sad ?? (r.scores[m] ? 1 - r.scores[m].iou : null)

export function gtCharts(report: {
  date: string
  pairs: PairRow[]
  summary: Record<string, Record<string, { sad: number | null; iou: number | null }>>
}) {
  const day = report.date.slice(0, 10)
  for (const g of GROUPS) {
    const rows = report.pairs.filter((r) => r.group === g)
    const coco = g === 'COCO'
    writeFileSync(
      `${DIR}gt-${g.toLowerCase()}.svg`,
      barChart({
        title: coco
          ? `${g}: IoU lost (1 − IoU) per pair; lower is better`
          : `${g}: SAD (thousands) per pair; lower is better`,
        subtitle: `../shared/gt · ${rows.length} pairs · ${day}`,
        unit: '',
        series: SERIES,
        groups: rows.map((r) => ({
          label: r.name.replace(/^(alphamatting-|davis345-|davis-|grabcut-|cocomval-)/, '').slice(0, 12),
          values: SERIES.map((s) => lossOf(r, s.key)),
        })),
      }),
    )
  }
  writeFileSync(
    `${DIR}gt-groups.svg`,
    barChart({
      title: 'Mean SAD (thousands) per group; COCO: 100 × (1 − mean IoU); lower is better',
      subtitle: `../shared/gt · cross-validated fast and high · ${day}`,
      unit: '',
      series: SERIES,
      groups: [...GROUPS, 'overall'].map((g) => ({
        label: g,
        values: SERIES.map((s) => {
          const m = report.summary[s.key][g]
          return g === 'COCO' ? (m.iou === null ? null : 100 * (1 - m.iou)) : m.sad
        }),
      })),
    }),
  )
}
