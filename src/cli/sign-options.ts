/** The options of `esign sign`, as commander parses them; shared by the command, the batch run and the split flow. */
import type { DigestName } from '../core/cms/algorithms.js';
import type { FormName } from '../core/forms/form.js';
import type { SignatureLevel } from '../core/profile.js';
import type { PdfPasswordOptions } from './pdf-password.js';
import type { CredentialFactorOptions } from './credential-factors.js';

/** What `--format` asks for; without it, PAdES for PDFs and a detached CAdES .p7s for other files. */
export const SIGN_FORMATS = ['pades', 'cades', 'p7m', 'asics', 'asice', 'xades'] as const satisfies readonly FormName[];
export type SignFormat = (typeof SIGN_FORMATS)[number];

export interface SignCommandOptions extends PdfPasswordOptions, CredentialFactorOptions {
  credential?: string;
  /** The signature's form; by the input's type when absent. */
  format?: SignFormat;
  /** The signature inside a new ASiC container (`--asic-signature`). */
  asicSignature?: 'xades' | 'cades';
  /** `--signature-policy`: a preset or OID,URL,ALG:HASH (XAdES-EPES). */
  signaturePolicy?: string;
  output?: string;
  outputDir?: string;
  force: boolean;
  level?: SignatureLevel;
  /** The signature's digest, when not the one that follows the key. */
  digest?: DigestName;
  reason?: string;
  location?: string;
  contactInfo?: string;
  name?: string;
  field?: string;
  visible: boolean;
  page?: number;
  rect?: [number, number, number, number];
  /** Repeatable: tried in order for each character, before esign's own font. */
  font?: string[];
  image?: string;
  imagePosition: 'left' | 'background';
  appearanceText?: string;
  certify?: 'no-changes' | 'form-filling' | 'annotations';
  continueOnError: boolean;
  /** Skip an input whose output already holds a valid signature over it by the same credential. */
  skipExisting: boolean;
  prepare: boolean;
  complete: boolean;
  state?: string;
  /** Repeatable: one per approval step with --complete; one for the sign-in with --prepare. */
  redirectUrl: string[];
  code?: string;
  upload: boolean;
  overwrite: boolean;
  /** qes, qeseal or qualified: refuse to sign with a credential that cannot give it (else ESIGN_REQUIRE). */
  require?: string;
}
