import type * as Sdk from '../../../generated/mapping/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import { defineModule } from '../../server/interface-module.ts';
import { buildApiIndex } from './api-index.ts';
import { renderMappingError } from './error-shape.ts';
import { createMappingHandlers } from './handlers.ts';
import { MAPPING_MIGRATIONS } from './migrations.ts';
import { createSqlMappingStore } from './store.ts';

/** Interface A, the expedition mapping API. */
export const mappingModule = defineModule({
  name: 'mapping',
  migrations: MAPPING_MIGRATIONS,
  errorShape: () => renderMappingError,
  create: (context) =>
    createMappingHandlers({
      store: createSqlMappingStore(context.database),
      ids: context.ids,
      apiIndex: buildApiIndex(context.runtime.document),
    }) satisfies OperationHandlers<typeof Sdk>,
});
