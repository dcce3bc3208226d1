import { Option } from "effect"

/** What decides where a presigned upload goes (the object store's settings, and the service's public address). */
export interface UploadSettings {
  readonly s3Bucket: Option.Option<string>
  readonly s3Endpoint: Option.Option<string>
  readonly s3Region: string
  readonly s3ForcePathStyle: boolean
  readonly publicBaseUrl: string
}

/**
 * The one origin a browser PUTs an attachment to, so the dashboard's CSP can name exactly it in `connect-src`:
 * the embedded store's links are the service's own (`PUBLIC_BASE_URL` + `/objects/upload`); S3's are the AWS SDK's
 * presigned URLs: path style (`S3_FORCE_PATH_STYLE`, or a bucket with dots, which a certificate cannot cover as a
 * subdomain) on the endpoint's origin, else the bucket as a subdomain of the endpoint, or of
 * `s3.<region>.amazonaws.com` without one.
 */
export const uploadOrigin = (s: UploadSettings): string => {
  if (Option.isNone(s.s3Bucket)) return new URL(s.publicBaseUrl).origin
  const bucket = s.s3Bucket.value
  const endpoint = new URL(Option.getOrElse(s.s3Endpoint, () => `https://s3.${s.s3Region}.amazonaws.com`))
  if (s.s3ForcePathStyle || bucket.includes(".")) return endpoint.origin
  return `${endpoint.protocol}//${bucket}.${endpoint.host}`
}
