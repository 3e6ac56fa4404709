import t from 'tap';
import {
  APPLICATION_PROPERTIES,
  APPLIED,
  BUILT_IN_MONITORS,
  DECLARATION_PROPERTIES,
  DEFAULT_VIRTUAL_PORT,
  TENANT_PROPERTIES,
} from './model.ts';
import { schemaOf } from './test-spec.ts';

const propertiesOf = (name: string) => Object.keys(schemaOf(name).properties).sort();

t.test("the levels' own properties are the spec's: everything else is a child (tenant, application, member)", async (t) => {
  t.same([...DECLARATION_PROPERTIES].sort(), propertiesOf('Declaration'));
  t.same([...TENANT_PROPERTIES].sort(), propertiesOf('Tenant'));
  t.same([...APPLICATION_PROPERTIES].sort(), propertiesOf('Application'));
});

t.test('the device applies what the spec says it applies', async (t) => {
  t.same(
    [...APPLIED.service].sort(),
    [...propertiesOf('Service'), 'controls'].sort(),
    'every Service property (and controls, never warned)',
  );
  t.same([...APPLIED.pool].sort(), [...propertiesOf('Pool'), 'controls'].sort(), 'every Pool property');
  t.same(
    [...APPLIED.poolMember].sort(),
    [...propertiesOf('PoolMember').filter((p) => p !== 'shareNodes'), 'class', 'label', 'remark', 'controls'].sort(),
    'every PoolMember property but shareNodes (kept and warned, as in the withWarnings example)',
  );
  t.same([...APPLIED.tenant].sort(), ['class', 'controls', 'label', 'remark'], 'tenant settings are kept and warned');
  t.equal(DEFAULT_VIRTUAL_PORT, schemaOf('Service').properties.virtualPort.default);
});

t.test('the built-in monitors are the ones MonitorReference lists', async (t) => {
  const description: string = schemaOf('MonitorReference').description;
  const listed = description
    .slice(0, description.indexOf(')'))
    .match(/`[a-z0-9-]+`/g)!
    .map((s) => s.slice(1, -1));
  t.same([...BUILT_IN_MONITORS].sort(), listed.sort());
});
