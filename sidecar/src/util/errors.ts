// The domain errors (AppError and its constructors) live in the shared package, because the
// WireGuard renderer there throws them too; this module re-exports them so that the sidecar's
// services keep one short import. The one error middleware in http/errors.ts maps each kind to a
// status code and the API's error body {ok:false, error, fields?}.
export * from '@gatehouse/common/errors.js';
