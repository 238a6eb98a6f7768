import { describe, expect, it } from 'vitest';
import { EsignError } from '../core/errors.js';
import { signWithCurrentSad } from './csc-sad-renewal.js';

/** Steps that record what was asked; `expiresIn` per authorization, `refusals` signHash answers of an expired SAD. */
function steps(options: { expiresIn?: number[]; extends: boolean; refusals?: number }) {
  const asked: string[] = [];
  let authorizations = 0;
  let refusals = options.refusals ?? 0;
  return {
    asked,
    authorize: async () => {
      const expiresIn = options.expiresIn?.[authorizations];
      authorizations += 1;
      asked.push(`authorize:${authorizations}`);
      return expiresIn === undefined ? { sad: `sad${authorizations}` } : { sad: `sad${authorizations}`, expiresIn };
    },
    extend: options.extends
      ? async (sad: string) => {
          asked.push(`extend:${sad}`);
          return { sad: `${sad}+`, expiresIn: 5 };
        }
      : undefined,
    sign: async (sad: string) => {
      asked.push(`sign:${sad}`);
      if (refusals > 0) {
        refusals -= 1;
        throw new EsignError('CSC_SAD_EXPIRED', 'The signature authorization (SAD) expired before signHash.');
      }
      return [sad];
    },
  };
}

describe('a SAD kept current for its signHash', () => {
  it('a SAD with its lifetime unsaid (3600 s) or long enough is used as it is', async () => {
    const plain = steps({ extends: true });
    expect(await signWithCurrentSad(plain)).toEqual(['sad1']);
    expect(plain.asked).toEqual(['authorize:1', 'sign:sad1']);
    const long = steps({ expiresIn: [300], extends: true });
    await signWithCurrentSad(long);
    expect(long.asked).toEqual(['authorize:1', 'sign:sad1']);
  });

  it('a SAD lapsing within the margin is extended where the service can, else used as it is', async () => {
    const extendable = steps({ expiresIn: [5], extends: true });
    expect(await signWithCurrentSad(extendable)).toEqual(['sad1+']);
    expect(extendable.asked).toEqual(['authorize:1', 'extend:sad1', 'sign:sad1+']);
    const not = steps({ expiresIn: [5], extends: false });
    expect(await signWithCurrentSad(not)).toEqual(['sad1']);
  });

  it('a SAD the service calls expired: one new authorization and the call once more; a second expiry fails', async () => {
    const once = steps({ extends: false, refusals: 1 });
    expect(await signWithCurrentSad(once)).toEqual(['sad2']);
    expect(once.asked).toEqual(['authorize:1', 'sign:sad1', 'authorize:2', 'sign:sad2']);
    await expect(signWithCurrentSad(steps({ extends: false, refusals: 2 }))).rejects.toMatchObject({
      code: 'CSC_SAD_EXPIRED',
    });
  });
});
