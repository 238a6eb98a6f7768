/**
 * Completes a credential's chain for the CMS when the service returned it short: from the trust
 * anchors, else from the AIA caIssuers of the last certificate, bounded in count and in time.
 * Says what it did through `trace` (--verbose); refuses in one line when the signer's certificate
 * came alone and its issuer cannot be found.
 */
import { issuesLast, nextChainStep } from '../core/csc/chain.js';
import { EsignError, isEsignError } from '../core/errors.js';

export interface ChainCompletionOptions {
  anchors: readonly Uint8Array[];
  /** GET of a caIssuers URL (DER or PEM); the revocation client's. */
  fetchCertificate(url: string): Promise<Uint8Array>;
  trace(line: string): void;
  /** Most issuer certificates fetched (default 4). */
  maxFetches?: number;
  /** Time for all the fetches together (default 10 s). */
  budgetMs?: number;
}

const MAX_STEPS = 8;

export async function completeChain(
  credentialID: string,
  certificates: readonly Uint8Array[],
  options: ChainCompletionOptions,
): Promise<Uint8Array[]> {
  const chain = [...certificates];
  const maxFetches = options.maxFetches ?? 4;
  const deadline = Date.now() + (options.budgetMs ?? 10_000);
  let fetches = 0;
  for (let step = 0; step < MAX_STEPS; step++) {
    const next = nextChainStep(chain, options.anchors);
    if (next.kind === 'complete') {
      if (chain.length > certificates.length)
        options.trace(
          `the chain of ${credentialID} is complete with ${chain.length - certificates.length} certificate(s) the service left out`,
        );
      return chain;
    }
    if (next.kind === 'append') {
      chain.push(next.certificate);
      options.trace(`the chain of ${credentialID}: its next issuer was taken from the ${next.from}`);
      continue;
    }
    if (next.kind === 'fetch' && fetches < maxFetches && Date.now() < deadline) {
      const found = await fetchIssuer(chain, next.urls, deadline, options, () => fetches++);
      if (found) {
        chain.push(found.certificate);
        options.trace(
          `the chain of ${credentialID}: fetched the issuer ${next.issuer} from ${found.url} (AIA caIssuers)`,
        );
        continue;
      }
    }
    return stuck(credentialID, chain, next.subject, next.issuer, options);
  }
  return stuck(credentialID, chain, '(a long chain)', '(its issuer)', options);
}

async function fetchIssuer(
  chain: Uint8Array[],
  urls: string[],
  deadline: number,
  options: ChainCompletionOptions,
  counted: () => void,
): Promise<{ certificate: Uint8Array; url: string } | undefined> {
  for (const url of urls) {
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    counted();
    let timer: NodeJS.Timeout | undefined;
    try {
      const certificate = await Promise.race([
        options.fetchCertificate(url),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new EsignError('HTTP_TIMEOUT', `no answer within ${Math.ceil(left / 1000)} s`)),
            left,
          );
        }),
      ]);
      if (issuesLast(chain, certificate)) return { certificate, url };
      options.trace(`the certificate at ${url} did not issue the last certificate of the chain`);
    } catch (error) {
      if (!isEsignError(error)) throw error;
      options.trace(`the issuer certificate at ${url} could not be fetched: ${error.message}`);
    } finally {
      clearTimeout(timer);
    }
  }
  return undefined;
}

/**
 * No way further. A chain of two or more (the root left out, as many services do) is used as the
 * service gave it; the signer's certificate alone is refused: the CMS would lack its issuers.
 */
function stuck(
  credentialID: string,
  chain: Uint8Array[],
  subject: string,
  issuer: string,
  options: ChainCompletionOptions,
): Uint8Array[] {
  if (chain.length >= 2) {
    options.trace(
      `the chain of ${credentialID} ends at ${subject}; its issuer ${issuer} is neither in the trust anchors nor fetchable, so the CMS carries the chain as it is`,
    );
    return chain;
  }
  throw new EsignError(
    'CREDENTIAL_CHAIN_INCOMPLETE',
    `The signing service gave only the certificate of ${credentialID}, and its issuer (${issuer}) is neither in the trust anchors nor fetchable from the certificate.`,
    {
      hint: 'Add the issuing CA certificate and its root to trustAnchors (esign config set trustAnchors PEM,…), or ask the provider to return the chain.',
      details: { credentialID, issuer },
    },
  );
}
