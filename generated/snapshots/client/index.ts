// Written by `npm run generate` (src/generate/sdk.ts): every SDK uses the one client runtime.

export * from '../../sdk-runtime/client/index.ts';
