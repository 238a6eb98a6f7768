// Loaded before every integration and interop test file: see secret-ledger.ts.
import { recordSandboxResponses } from './secret-ledger.js';

recordSandboxResponses();
