import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/contract/**/*.test.ts', 'test/deploy/**/*.test.ts'],
    environment: 'node',
    silent: 'passed-only',
  },
})
