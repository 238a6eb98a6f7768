import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts'], testTimeout: 30_000 } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          setupFiles: ['test/helpers/secret-scan.setup.ts'],
          globalSetup: ['test/helpers/secret-scan.global.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts'],
          setupFiles: ['test/helpers/secret-scan.setup.ts'],
          globalSetup: ['test/helpers/secret-scan.global.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
