import { describe, expect, it } from 'vitest'
import { parseRemoveOptions } from '../src/options.js'

const json = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value))
const parse = (value: unknown) => parseRemoveOptions(json(value))
const base = { quality: 'fast', alpha: { mode: 'raw', feather: 0 }, output: 'mask' }

describe('parseRemoveOptions', () => {
  it('parses raw and binary options', () => {
    expect(parse({ quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'mask' })).toEqual({
      quality: 'balanced',
      alpha: { mode: 'raw', feather: 0 },
      output: 'mask',
    })
    expect(
      parse({ quality: 'high', alpha: { mode: 'binary', threshold: 0.5, feather: 2.5 }, output: 'cutout' }),
    ).toEqual({
      quality: 'high',
      alpha: { mode: 'binary', threshold: 0.5, feather: 2.5 },
      output: 'cutout',
    })
  })

  it('fills what is left out with the documented defaults (balanced, raw alpha unfeathered, a cutout)', () => {
    expect(parse({ quality: 'fast', output: 'mask' })).toEqual({ ...base, alpha: { mode: 'raw', feather: 0 } })
    expect(parse({})).toEqual({ quality: 'balanced', alpha: { mode: 'raw', feather: 0 }, output: 'cutout' })
  })

  it.each([
    [{ ...base, quality: 'best' }, 'Invalid option: expected one of "fast"|"balanced"|"high" for quality'],
    [
      { ...base, alpha: { mode: 'binary', threshold: 2, feather: 0 } },
      'Too big: expected number to be <=1 for alpha.threshold',
    ],
    [
      { ...base, alpha: { mode: 'binary', threshold: '0.5', feather: 0 } },
      'Invalid input: expected number, received string for alpha.threshold',
    ],
    [
      { ...base, alpha: { mode: 'binary', feather: 0 } },
      'Invalid input: expected number, received undefined for alpha.threshold',
    ],
    [
      { ...base, alpha: { mode: 'raw', threshold: 0.5, feather: 0 } },
      'Unknown field alpha.threshold: options are strict',
    ],
    [{ ...base, alpha: { mode: 'raw', feather: 5 } }, 'Too big: expected number to be <=4 for alpha.feather'],
    [{ ...base, alpha: { mode: 'raw', feather: -1 } }, 'Too small: expected number to be >=0 for alpha.feather'],
    [
      { ...base, alpha: { mode: 'soft', feather: 0 } },
      "Invalid discriminator value. Expected 'raw' | 'binary' for alpha.mode",
    ],
    [{ ...base, output: 'png' }, 'Invalid option: expected one of "mask"|"cutout" for output'],
    [{ ...base, format: 'png' }, 'Unknown field format: options are strict'],
    [{ ...base, format: 'png', size: 'full' }, 'Unknown field format: options are strict'],
    [[base], 'Invalid input: expected object, received array'],
    ['quality=fast&alpha=raw&feather=0&output=mask', 'Expected the options part to be JSON'],
  ])('rejects %j', (value, message) => {
    expect(() => parse(value)).toThrow(message)
    try {
      parse(value)
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid_input', status: 400, retryable: false, message })
    }
  })

  it('refuses a request without an options part', () => {
    expect(() => parseRemoveOptions(undefined)).toThrow(/^Expected an options part$/)
  })
})

describe('maxPixels', () => {
  it('accepts a pixel budget and refuses one out of range or fractional', () => {
    expect(parse({ ...base, output: 'cutout', maxPixels: 250_000 })).toMatchObject({ maxPixels: 250_000 })
    expect(parse({ ...base, maxPixels: 1024 })).toMatchObject({ maxPixels: 1024 })
    expect(parse({ ...base, maxPixels: 25_000_000 })).toMatchObject({ maxPixels: 25_000_000 })
    expect(() => parse({ ...base, maxPixels: 10 })).toThrow('Too small: expected number to be >=1024 for maxPixels')
    expect(() => parse({ ...base, maxPixels: 25_000_001 })).toThrow(
      'Too big: expected number to be <=25000000 for maxPixels',
    )
    expect(() => parse({ ...base, maxPixels: 250_000.5 })).toThrow(
      'Invalid input: expected int, received number for maxPixels',
    )
  })
})
