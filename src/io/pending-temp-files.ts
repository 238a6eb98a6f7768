/** Temp files in flight, removed on SIGINT/SIGTERM by the CLI's signal handler (kept tiny: main imports it). */
export const pendingTempFiles = new Set<string>();
