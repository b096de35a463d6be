/** The SVG chart of the speed run (bench/all.ts): per image, each path's time ÷ the floor. */
import { barChart } from './svg.js'

interface Report {
  date: string
  machine: { cpuModel: string; cores: number; node: string; memoryGB: number }
  floor: { median: number }
  images: Array<{ name: string; ratios: Record<string, number | null> }>
}

export function ratioChart(report: Report): string {
  const { machine } = report
  return barChart({
    title: 'Time per image ÷ one bare session.run (the floor); lower is better',
    subtitle: `${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGB} GB, node ${machine.node} · floor median ${(report.floor.median / 1000).toFixed(2)} s · ${report.date.slice(0, 10)}`,
    series: [
      { label: 'inference server, mask', color: '#8ecae6' },
      { label: 'inference server, cutout', color: '#219ebc' },
      { label: 'API via wrangler dev (cutout)', color: '#023047' },
      { label: 'reference removeBackground', color: '#fb8500' },
    ],
    groups: report.images.map((r) => ({
      label: r.name.replace('synthetic-', '').replace(/\.(jpg|png)$/, ''),
      values: [
        r.ratios.serverMaskToFloor,
        r.ratios.serverCutoutToFloor,
        r.ratios.apiRemovalToFloor,
        r.ratios.referenceToFloor,
      ],
    })),
    lines: [{ value: 1.25, label: 'target at 1 MP: 1.25× the floor' }],
  })
}
