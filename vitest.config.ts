import { defineConfig } from 'vitest/config';

// ESIGN_FUZZ_RUNS=N runs N times as many fuzz cases (test/helpers/fuzz.ts), so it gets N times the time.
const fuzzMultiplier = Math.max(1, Number(process.env['ESIGN_FUZZ_RUNS'] ?? '1') || 1);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          testTimeout: 30_000 * fuzzMultiplier,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          setupFiles: ['test/helpers/secret-scan.setup.ts'],
          globalSetup: ['test/helpers/secret-scan.global.ts', 'test/helpers/sandbox-template.global.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          setupFiles: ['test/helpers/secret-scan.setup.ts'],
          globalSetup: ['test/helpers/secret-scan.global.ts', 'test/helpers/sandbox-template.global.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
