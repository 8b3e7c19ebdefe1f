import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { UsageKeySlot, UsageKeySlotRepository } from '#domain/usage-keys.ts';
import { storeCall } from './errors.ts';
import { DynamoRepository, keyCondition, queryInput, queryPages } from './items.ts';
import { entities, keys } from './keys.ts';

/** A slot from its item (the fields of the domain type only). */
function toSlot(item: Record<string, unknown>): UsageKeySlot {
  return {
    slot: item.slot as number,
    id: item.id as string,
    value: item.value as string,
    created_at: item.created_at as string,
  };
}

/** The usage-key pool in the catalog table (ADR 0111): one counter item and one item per slot. */
export class DynamoUsageKeySlotRepository extends DynamoRepository implements UsageKeySlotRepository {
  async nextAssignment(): Promise<number> {
    const out = await storeCall(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.usageKeyCounter(),
          UpdateExpression: 'ADD #next :one SET entity = :entity',
          ExpressionAttributeNames: { '#next': 'next' },
          ExpressionAttributeValues: { ':one': 1, ':entity': entities.usageKeyCounter },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    return Number(out.Attributes?.next);
  }

  async find(slot: number): Promise<UsageKeySlot | undefined> {
    const item = await this.get(keys.usageKeySlot(slot));
    return item ? toSlot(item) : undefined;
  }

  async claim(slot: UsageKeySlot): Promise<boolean> {
    const taken = new Error('usage key slot taken');
    try {
      await storeCall(
        () =>
          this.db.send(
            new PutCommand({
              TableName: this.table,
              Item: { ...keys.usageKeySlot(slot.slot), entity: entities.usageKeySlot, ...slot },
              ConditionExpression: 'attribute_not_exists(PK)',
            }),
          ),
        { onConditionFailed: () => taken },
      );
      return true;
    } catch (error) {
      if (error === taken) return false;
      throw error;
    }
  }

  async all(): Promise<UsageKeySlot[]> {
    const slots: UsageKeySlot[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, keyCondition(keys.usageKeySlotPartition, { prefix: keys.usageKeySlotPrefix })),
      (items) => {
        for (const item of items) slots.push(toSlot(item));
        return true;
      },
    );
    return slots;
  }
}
