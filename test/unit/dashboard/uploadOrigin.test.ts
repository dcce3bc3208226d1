import { Option } from "effect"
import { describe, expect, it } from "vitest"
import { dashboardCsp } from "../../../src/web/dashboard/DashboardRoutes"
import { uploadOrigin } from "../../../src/web/dashboard/UploadOrigin"

const base = {
  s3Bucket: Option.none<string>(),
  s3Endpoint: Option.none<string>(),
  s3Region: "eu-west-1",
  s3ForcePathStyle: false,
  publicBaseUrl: "https://pay.example.com/base"
}

describe("the origin attachment uploads go to", () => {
  it("is the service's public origin with the embedded store", () => {
    expect(uploadOrigin(base)).toBe("https://pay.example.com")
  })
  it("is the bucket's virtual host on AWS, or on the endpoint", () => {
    expect(uploadOrigin({ ...base, s3Bucket: Option.some("docs") })).toBe(
      "https://docs.s3.eu-west-1.amazonaws.com"
    )
    expect(
      uploadOrigin({
        ...base,
        s3Bucket: Option.some("docs"),
        s3Endpoint: Option.some("https://r2.example.net/x")
      })
    ).toBe("https://docs.r2.example.net")
  })
  it("is the endpoint itself in path style, or for a bucket with dots", () => {
    const minio = { ...base, s3Bucket: Option.some("docs"), s3Endpoint: Option.some("http://127.0.0.1:9000") }
    expect(uploadOrigin({ ...minio, s3ForcePathStyle: true })).toBe("http://127.0.0.1:9000")
    expect(uploadOrigin({ ...base, s3Bucket: Option.some("docs.example.com") })).toBe(
      "https://s3.eu-west-1.amazonaws.com"
    )
  })
  it("is named in connect-src only when it is not the service's own", () => {
    expect(dashboardCsp("https://pay.example.com", "https://pay.example.com")).toContain(
      "connect-src 'self';"
    )
    expect(dashboardCsp("https://docs.s3.eu-west-1.amazonaws.com", "https://pay.example.com")).toContain(
      "connect-src 'self' https://docs.s3.eu-west-1.amazonaws.com;"
    )
  })
})
