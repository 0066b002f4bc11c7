// The parts of the served OpenAPI document (GET /api/v1/openapi.json) that tests read.

export interface OpenApiParameter {
  name: string;
  in?: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

export interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: OpenApiParameter[];
  'x-feature'?: string;
  [k: string]: unknown;
}

/** `paths`: path → method → operation */
export type OpenApiPaths = Record<string, Record<string, OpenApiOperation>>;
