/** The XML namespaces esign reads and writes: XML-DSig, XAdES, ASiC and the ODF manifest. */
export const NS = {
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  /** XML-DSig 1.1 (ECDSA key values, new algorithm names). */
  dsig11: 'http://www.w3.org/2009/xmldsig11#',
  /** XAdES (ETSI EN 319 132-1, TS 101 903 v1.3.2). */
  xades: 'http://uri.etsi.org/01903/v1.3.2#',
  /** XAdES 1.4.1 additions: ArchiveTimeStamp, TimeStampValidationData. */
  xades141: 'http://uri.etsi.org/01903/v1.4.1#',
  /** The older XAdES 1.2.2 namespace some files still carry. */
  xades122: 'http://uri.etsi.org/01903/v1.2.2#',
  /** ASiC (ETSI EN 319 162-1): XAdESSignatures, ASiCManifest. */
  asic: 'http://uri.etsi.org/02918/v1.2.1#',
  /** The ODF manifest of an ASiC-E (META-INF/manifest.xml). */
  manifest: 'urn:oasis:names:tc:opendocument:xmlns:manifest:1.0',
  xml: 'http://www.w3.org/XML/1998/namespace',
  xmlns: 'http://www.w3.org/2000/xmlns/',
  /** XPath Filter 2.0 (the enveloped-signature form some writers use). */
  xpathFilter2: 'http://www.w3.org/2002/06/xmldsig-filter2',
} as const;

/** The Type of the Reference to a signature's SignedProperties (XAdES). */
export const SIGNED_PROPERTIES_TYPE = 'http://uri.etsi.org/01903#SignedProperties';

/** Transforms and canonicalization methods, by URI. */
export const TRANSFORM = {
  enveloped: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
  c14n: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  c14nComments: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments',
  c14n11: 'http://www.w3.org/2006/12/xml-c14n11',
  c14n11Comments: 'http://www.w3.org/2006/12/xml-c14n11#WithComments',
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  excC14nComments: 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
  xpath: 'http://www.w3.org/TR/1999/REC-xpath-19991116',
  xpathFilter2: 'http://www.w3.org/2002/06/xmldsig-filter2',
  xslt: 'http://www.w3.org/TR/1999/REC-xslt-19991116',
  base64: 'http://www.w3.org/2000/09/xmldsig#base64',
} as const;
