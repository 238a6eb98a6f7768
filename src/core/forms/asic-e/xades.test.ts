import { describe, expect, it } from 'vitest';
import { holdsXades, nextSignatureName, odfManifest } from './xades.js';

describe('an ASiC-E’s XAdES entries', () => {
  it('the next signature file: signatures0.xml first, then one more than the highest there', () => {
    expect(nextSignatureName([])).toBe('META-INF/signatures0.xml');
    expect(nextSignatureName(['META-INF/manifest.xml', 'META-INF/signatures0.xml'])).toBe('META-INF/signatures1.xml');
    expect(nextSignatureName(['META-INF/signatures.xml', 'META-INF/signatures7.xml'])).toBe('META-INF/signatures8.xml');
  });

  it('a container signed again keeps its form: XAdES only when it holds XAdES and no CAdES', () => {
    expect(holdsXades(['META-INF/manifest.xml', 'META-INF/signatures0.xml'])).toBe(true);
    expect(holdsXades(['META-INF/ASiCManifest.xml', 'META-INF/signature001.p7s'])).toBe(false);
    expect(holdsXades(['META-INF/signatures0.xml', 'META-INF/signature001.p7s'])).toBe(false);
  });

  it('manifest.xml lists the container and each file with its MIME type, names escaped', () => {
    const xml = Buffer.from(odfManifest(['docs/a b.pdf', 'x&y.xml'])).toString('utf8');
    expect(xml).toContain(
      '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>',
    );
    expect(xml).toContain('manifest:full-path="docs/a b.pdf" manifest:media-type="application/pdf"');
    expect(xml).toContain('manifest:full-path="x&#38;y.xml" manifest:media-type="text/xml"');
  });
});
