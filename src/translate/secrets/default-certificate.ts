/**
 * Self-signed certificate for the default server when no --default-certificate is given: SNI that
 * matches no host, and hosts whose own certificate is missing or bad, get this one (as ingress-nginx's
 * generated fake certificate). It is bundled, not generated, so output stays byte-for-byte stable;
 * no client trusts it, and production setups should name their own with --default-certificate.
 */
export const bundledDefaultCertificate = `-----BEGIN CERTIFICATE-----
MIICATCCAaegAwIBAgIUPixL8B6gXICWQy/1hcYZTvy2JBowCgYIKoZIzj0EAwIw
RDEWMBQGA1UECgwNaW5ncmVzczJuZ2lueDEqMCgGA1UEAwwhaW5ncmVzczJuZ2lu
eCBkZWZhdWx0IGNlcnRpZmljYXRlMCAXDTI2MTEyOTE1MDEzOVoYDzIxMjYxMTA1
MTUwMTM5WjBEMRYwFAYDVQQKDA1pbmdyZXNzMm5naW54MSowKAYDVQQDDCFpbmdy
ZXNzMm5naW54IGRlZmF1bHQgY2VydGlmaWNhdGUwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQ7VpguXWPUjqCkIoCqodfFTVMwAqdPCsxk+ruCPMSd5dljMoybug/e
gzUkYRUGLWyQpZj+9bHIC+cUeyq/XCJTo3UwczAdBgNVHQ4EFgQUaSWpiqhnO1if
JwQuV1aPLbRB9NQwHwYDVR0jBBgwFoAUaSWpiqhnO1ifJwQuV1aPLbRB9NQwDwYD
VR0TAQH/BAUwAwEB/zAgBgNVHREEGTAXghVpbmdyZXNzMm5naW54LmludmFsaWQw
CgYIKoZIzj0EAwIDSAAwRQIhALS3G/ktFvgcz+/0VVgk7Ms8GGA9e3CRbV+4weP0
i8XpAiBXAVIQy/p3ZW7uNxptB/Gdbg5eH6d4WuxSFNhwv7TsLA==
-----END CERTIFICATE-----
`;

export const bundledDefaultKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQglj6KKsRGQ23elBmx
FT9s49UI8l/kD6aL3lWwhO28jiChRANCAAQ7VpguXWPUjqCkIoCqodfFTVMwAqdP
Csxk+ruCPMSd5dljMoybug/egzUkYRUGLWyQpZj+9bHIC+cUeyq/XCJT
-----END PRIVATE KEY-----
`;
