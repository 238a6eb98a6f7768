/**
 * A SAD kept current for the signHash call that spends it. A SAD that will lapse before the call
 * can finish is renewed first with `credentials/extendTransaction` where the service lists it
 * (v1.0.4 §11.7); a SAD the service calls expired (it cannot be extended then) is replaced by one
 * new authorization, and the call is made once more. A second expiry fails as it is.
 */
import { isEsignError } from '../core/errors.js';
import { SAD_DEFAULT_LIFETIME_S, type CredentialAuthorization } from '../core/csc/shapes.js';

/** What a signHash call may take, with the transport's retries: a SAD with less left is renewed before it. */
export const SAD_RENEWAL_MARGIN_MS = 10_000;

export interface SadSteps<T> {
  /** A new authorization of the batch (credentials/authorize, or a browser approval). */
  authorize(): Promise<CredentialAuthorization>;
  /** credentials/extendTransaction for the batch, when the service lists it. */
  extend: ((sad: string) => Promise<CredentialAuthorization>) | undefined;
  /** The signHash call. */
  sign(sad: string): Promise<T>;
}

/** Authorizes a batch and signs it with a SAD that is current when the call is made. */
export async function signWithCurrentSad<T>(steps: SadSteps<T>): Promise<T> {
  const current = async (): Promise<string> => {
    const authorized = await steps.authorize();
    if (!steps.extend || (authorized.expiresIn ?? SAD_DEFAULT_LIFETIME_S) * 1000 >= SAD_RENEWAL_MARGIN_MS)
      return authorized.sad;
    return (await steps.extend(authorized.sad)).sad;
  };
  const sad = await current();
  try {
    return await steps.sign(sad);
  } catch (error) {
    if (!isEsignError(error, 'CSC_SAD_EXPIRED')) throw error;
    return steps.sign(await current());
  }
}

/** The SAD a browser approval gave (the access token of scope credential), as credentials/authorize gives one. */
export function sadOfApproval(token: { accessToken: string; expiresIn?: number }): CredentialAuthorization {
  return token.expiresIn === undefined
    ? { sad: token.accessToken }
    : { sad: token.accessToken, expiresIn: token.expiresIn };
}
