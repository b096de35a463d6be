/**
 * The test world outside the Worker, on 127.0.0.1 only: image files to fetch by `sourceUrl`,
 * redirects, a DNS-over-HTTPS stand-in for the SSRF guard, and the switch of the inference proxy.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { InferenceProxy, ProxyMode } from './inference-proxy'

const FIXTURES = new URL('../fixtures/', import.meta.url)

/** Fake DNS answers. Public names are never fetched by tests; they only feed the guard. */
const DNS: Record<string, string[]> = {
  'public.test': ['93.184.216.34'],
  'mixed.test': ['93.184.216.34', '10.1.2.3'],
  'private.test': ['192.168.1.10'],
  'metadata.test': ['169.254.169.254'],
  'v6-loopback.test': ['::1'],
}

export function startFixtureServer(port: number, proxy: InferenceProxy): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`)
    if (url.pathname.startsWith('/files/')) {
      const name = url.pathname.slice('/files/'.length).replace(/[^a-z0-9._-]/gi, '')
      try {
        const bytes = readFileSync(new URL(name, FIXTURES))
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length })
        return res.end(bytes)
      } catch {
        res.writeHead(404)
        return res.end()
      }
    }
    if (url.pathname === '/text.png') {
      res.writeHead(200, { 'content-type': 'image/png' })
      return res.end('this is not an image, whatever its name says\n')
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' })
      return res.end()
    }
    if (url.pathname === '/dns-query') {
      const name = url.searchParams.get('name') ?? ''
      const type = url.searchParams.get('type') === 'AAAA' ? 28 : 1
      const answers = (DNS[name] ?? []).filter((a) => a.includes(':') === (type === 28))
      res.writeHead(200, { 'content-type': 'application/dns-json' })
      return res.end(JSON.stringify({ Status: 0, Answer: answers.map((data) => ({ name, type, TTL: 60, data })) }))
    }
    if (url.pathname === '/control/inference' && req.method === 'POST') {
      proxy.mode = (url.searchParams.get('mode') ?? 'normal') as ProxyMode
      if (url.searchParams.has('reset')) proxy.removeCalls = 0
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ mode: proxy.mode, removeCalls: proxy.removeCalls }))
    }
    if (url.pathname === '/control/inference') {
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ mode: proxy.mode, removeCalls: proxy.removeCalls }))
    }
    res.writeHead(404)
    res.end()
  })
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)))
}
