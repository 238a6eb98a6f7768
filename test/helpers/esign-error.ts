import { EsignError } from '../../src/core/errors.js';

/** The EsignError `run` throws, or undefined when it throws none (anything else is rethrown). */
export function errorOf(run: () => unknown): EsignError | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof EsignError) return error;
    throw error;
  }
  return undefined;
}
