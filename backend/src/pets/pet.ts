import { enums, object, optional } from 'superstruct';
import { PositiveId, nonBlankString } from '../http/params.ts';

const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];
export const PetStatusStruct = enums(PET_STATUSES);

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/** NewPet as the spec defines it; any other field is rejected by name. */
export const NewPetStruct = object({
  name: nonBlankString(200),
  categoryId: PositiveId,
  status: optional(PetStatusStruct),
});
