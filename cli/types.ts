/** The bodies the CLI reads (its own view of shared/api's schemas: only what it uses). */

import type { ImportStatus } from '../shared/domain/import-model.ts';

export type { ImportStatus };

export interface UploadTicket {
  url: string;
  method: 'POST';
  fields: Record<string, string>;
  file_field: string;
  expires_at: string;
  max_bytes: number;
}

export interface DiscoveryLayer {
  name: string;
  geometry_type: string | null;
  srid: number | null;
  feature_count: number;
}

export interface ImportJob {
  id: string;
  workspace_id: string;
  name: string;
  status: ImportStatus;
  phase: string;
  service_name: string;
  service_id?: string;
  rollback_operation_id?: string;
  auto_publish: boolean;
  processed_bytes: number;
  processed_features: number;
  processed_layers: number;
  total_layers: number;
  warnings?: string[];
  error_message?: string;
  discovery?: { format: string; size_bytes: number; layers: DiscoveryLayer[]; warnings: string[] };
  source_filename?: string;
  source_uri?: string;
  upload?: UploadTicket;
  created_at: string;
  updated_at: string;
}

export interface ImportEvent {
  status: ImportStatus;
  phase: string;
  created_at: string;
  processed_bytes: number;
  processed_features: number;
  processed_layers: number;
  warnings?: string[];
  error_message?: string;
}

export interface DeletionOperation {
  id: string;
  status: 'pending' | 'running' | 'failed' | 'completed';
  phase: string;
  progress: { total: number; deleted: number };
  last_error?: string;
}

export interface Layer {
  id: string;
  public_id: string;
  title: string;
  source_layer: string;
}
