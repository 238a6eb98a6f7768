import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// ESIGN_FUZZ_RUNS=N runs N times as many fuzz cases (test/helpers/fuzz.ts), so it gets N times the time.
const fuzzMultiplier = Math.max(1, Number(process.env['ESIGN_FUZZ_RUNS'] ?? '1') || 1);

// The unit and integration files run side by side in this many workers. An integration file mostly
// waits (on the CLI's child processes, and on the delays, time-outs and backoff its faults ask
// for), so a worker per core, less one (vitest's default: a single worker on 2 cores), left the
// cores idle most of `npm test`.
const workers = Math.max(3, availableParallelism() - 1);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          maxWorkers: workers,
          testTimeout: 30_000 * fuzzMultiplier,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          maxWorkers: workers,
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
          // vitest's default workers (its judges are heavier), so after the others when all run at once.
          sequence: { groupOrder: 1 },
          setupFiles: ['test/helpers/secret-scan.setup.ts'],
          globalSetup: ['test/helpers/secret-scan.global.ts', 'test/helpers/sandbox-template.global.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
