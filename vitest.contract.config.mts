import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // …the local D1 session `npm start` prepares (test/local), and the test runner's own helpers
    // that need no stack (test/helpers/stalled-run.test.ts).
    include: [
      'test/contract/**/*.test.ts',
      'test/deploy/**/*.test.ts',
      'test/local/**/*.test.ts',
      'test/helpers/**/*.test.ts',
      // The generated client files and the document's retry rules (node types, so under test/clients).
      'test/clients/generated.test.ts',
    ],
    environment: 'node',
    // One fork for the four files, not one each (~2.5 CPU-s of start-up and imports per file): they
    // mock nothing; the two that build /openapi.json import the app, which imports
    // @hono/zod-openapi before the contract (test/helpers/zod-openapi.ts says why that matters).
    isolate: false,
    silent: 'passed-only',
  },
})
