// The e2b SDK under test: the pinned one (`e2b`, 2.51.0) or, with
// CORRAL_E2B_SDK=e2b-old, the older 2.45.0 (package.json aliases it), which
// calls some routes by other paths and checks key formats before any request.
// tests/e2b/run.sh runs every test file with the pinned one, and those about
// what the old one does differently with it (by host only).
export const SDK = process.env.CORRAL_E2B_SDK || 'e2b';
if (!['e2b', 'e2b-old'].includes(SDK)) throw new Error(`CORRAL_E2B_SDK: e2b or e2b-old, not ${SDK}`);
const sdk = await import(SDK);
export const { Sandbox, CommandExitError, ALL_TRAFFIC, Template, Volume, VolumeError,
  VolumePathNotFoundError, AuthenticationError } = sdk;
