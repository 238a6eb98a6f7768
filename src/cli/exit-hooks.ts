/** Synchronous clean-ups that must run when esign is interrupted (SIGINT/SIGTERM) before exiting. */
export const exitHooks = new Set<() => void>();
