// The A64 scan's fixture (tests/unit/test_hw_a64_feature_scan.cpp): SVE in one function, a
// literal in another that reads as an SVE instruction but lies after a `$d` mapping symbol, and an
// IFUNC whose resolver picks an SVE version by ADRP and ADD. Rebuilt by make_fixtures.sh.
	.arch armv8.2-a+sve
	.text

	.global plain
	.type plain, %function
plain:
	add x0, x0, x1
	ldr w2, literal
	ret
literal:
	.word 0x04a00000	// the encoding of `add z0.s, z0.s, z0.s`, here data
	.size plain, .-plain

	.global vector_add
	.type vector_add, %function
vector_add:
	ptrue p0.s
	ld1w {z0.s}, p0/z, [x0]
	add z0.s, z0.s, z0.s
	st1w {z0.s}, p0, [x0]
	ret
	.size vector_add, .-vector_add

	.type count_sve, %function
count_sve:
	cntw x0
	ret
	.size count_sve, .-count_sve

	.type count_plain, %function
count_plain:
	mov x0, #4
	ret
	.size count_plain, .-count_plain

	.global count
	.type count, %gnu_indirect_function
count:
	adrp x0, count_sve
	add x0, x0, :lo12:count_sve
	tbnz x1, #22, 1f
	adrp x0, count_plain
	add x0, x0, :lo12:count_plain
1:	ret
	.size count, .-count
