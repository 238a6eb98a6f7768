/** The URIs and OIDs of ETSI TS 119 612 (trusted lists) and EN 319 412-5 / EN 319 411-2 (certificates) that qualification reads. */

const SERVICE_TYPE = 'http://uri.etsi.org/TrstSvc/Svctype/';
export const SERVICE_CA_QC = `${SERVICE_TYPE}CA/QC`;
export const SERVICE_TSA_QTST = `${SERVICE_TYPE}TSA/QTST`;

const STATUS_URI = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';
/** The statuses qualification reads (periods.ts, determine.ts: which count, by the era of the period's start). */
export const STATUS = {
  granted: `${STATUS_URI}granted`,
  withdrawn: `${STATUS_URI}withdrawn`,
  undersupervision: `${STATUS_URI}undersupervision`,
  supervisionincessation: `${STATUS_URI}supervisionincessation`,
  accredited: `${STATUS_URI}accredited`,
  setbynationallaw: `${STATUS_URI}setbynationallaw`,
} as const;

const EXTENSION = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
export const QUALIFIER = {
  withSscd: `${EXTENSION}QCWithSSCD`,
  noSscd: `${EXTENSION}QCNoSSCD`,
  sscdAsInCert: `${EXTENSION}QCSSCDStatusAsInCert`,
  withQscd: `${EXTENSION}QCWithQSCD`,
  noQscd: `${EXTENSION}QCNoQSCD`,
  qscdAsInCert: `${EXTENSION}QCQSCDStatusAsInCert`,
  qscdManagedOnBehalf: `${EXTENSION}QCQSCDManagedOnBehalf`,
  forLegalPerson: `${EXTENSION}QCForLegalPerson`,
  forESig: `${EXTENSION}QCForESig`,
  forESeal: `${EXTENSION}QCForESeal`,
  forWsa: `${EXTENSION}QCForWSA`,
  notQualified: `${EXTENSION}NotQualified`,
  qcStatement: `${EXTENSION}QCStatement`,
} as const;

/** AdditionalServiceInformation: what a CA/QC service issues qualified certificates for (eIDAS). */
export const FOR_ESIGNATURES = `${EXTENSION}ForeSignatures`;
export const FOR_ESEALS = `${EXTENSION}ForeSeals`;
export const FOR_WEBSITE_AUTHENTICATION = `${EXTENSION}ForWebSiteAuthentication`;

/** EN 319 412-5 QC statements. */
export const OID_QC_STATEMENTS = '1.3.6.1.5.5.7.1.3';
export const OID_QC_COMPLIANCE = '0.4.0.1862.1.1';
export const OID_QC_SSCD = '0.4.0.1862.1.4';
export const OID_QC_TYPE = '0.4.0.1862.1.6';
export const OID_QC_TYPE_ESIGN = '0.4.0.1862.1.6.1';
export const OID_QC_TYPE_ESEAL = '0.4.0.1862.1.6.2';
export const OID_QC_TYPE_WEB = '0.4.0.1862.1.6.3';
export const OID_QC_LEGISLATION = '0.4.0.1862.1.7';

/** EN 319 411-2 policies of EU qualified certificates, and the TS 101 456 ones from before eIDAS. */
export const POLICY = {
  qcpNatural: '0.4.0.194112.1.0',
  qcpLegal: '0.4.0.194112.1.1',
  qcpNaturalQscd: '0.4.0.194112.1.2',
  qcpLegalQscd: '0.4.0.194112.1.3',
  qcpWeb: '0.4.0.194112.1.4',
  qcpPublicWithSscd: '0.4.0.1456.1.1',
  qcpPublic: '0.4.0.1456.1.2',
} as const;
