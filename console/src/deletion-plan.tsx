/** What a recursive deletion will remove, shown before the operator confirms it. */
import type { Schemas } from './api.ts';

export type DeletionPlan = Schemas['DeletionPlan'];

function Section({ title, section }: { title: string; section: DeletionPlan['layers'] }) {
  if (section.count === 0) return null;
  return (
    <li>
      {section.count} {title}
      {section.items.length > 0 ? (
        <>
          {': '}
          {section.items
            .slice(0, 10)
            .map((item) => item.name ?? item.public_id ?? item.id)
            .join(', ')}
          {section.count > 10 || section.truncated ? ', …' : ''}
        </>
      ) : null}
    </li>
  );
}

export function DeletionPlanView({ plan }: { plan: DeletionPlan }) {
  return (
    <div class="plan">
      <p>
        Deleting {plan.target.scope} <strong>{plan.target.name}</strong> removes {plan.total} item
        {plan.total === 1 ? '' : 's'}:
      </p>
      <ul>
        <Section title="layers" section={plan.layers} />
        <Section title="layer groups" section={plan.layer_groups} />
        {plan.mosaic_granules > 0 ? <li>{plan.mosaic_granules} mosaic granules</li> : null}
        {Object.entries(plan.workspace_items ?? {})
          .filter(([, count]) => count > 0)
          .map(([kind, count]) => (
            <li key={kind}>
              {count} {kind.replace(/_/g, ' ')}
            </li>
          ))}
        {plan.style_references.map((ref) => (
          <li key={ref.style}>
            {ref.references} reference{ref.references === 1 ? '' : 's'} to style {ref.style} released
          </li>
        ))}
      </ul>
    </div>
  );
}
