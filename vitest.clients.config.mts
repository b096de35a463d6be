import { defineConfig } from 'vitest/config'

// The SDK, the CLI, the MCP server (remote and `cutout mcp`), the Python client (pytest,
// test/clients/python.test.ts), the contract walk through Prism's validating proxy
// (test/clients/prism.test.ts) and the web page (in headless Chromium) against the real local
// stack (`npm start` with the real model), one file at a time; they import and run the built
// packages (sdk/dist, cli/dist), which the `clients` stage of scripts/test.ts builds first. All of
// them share one stack started here (test/helpers/clients-stack.ts).
export default defineConfig({
  test: {
    include: [
      'sdk/test/**/*.test.ts',
      'cli/test/**/*.test.ts',
      'test/mcp/**/*.test.ts',
      'test/clients/**/*.test.ts',
      'web/test/**/*.test.ts',
    ],
    environment: 'node',
    globalSetup: ['./test/helpers/clients-stack.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 420_000,
    silent: 'passed-only',
  },
})
