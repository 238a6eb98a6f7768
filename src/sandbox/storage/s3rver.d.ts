// s3rver ships no types; s3.ts describes the part it uses (S3rverConstructor).
declare module 's3rver' {
  const S3rver: unknown;
  export default S3rver;
}
