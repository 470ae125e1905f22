# SPDX-License-Identifier: GPL-3.0-or-later
#
# A hand-written DWARF 4 line table with known answers for tests/unit/test_elf.c
# (test_handmade_lines): overlapping units, a sequence the linker left at
# address 0, several rows at one address, line 0, non-statement rows, a file
# named twice (once with "sub/.."), an out-of-scope file, and a sequence that
# runs past the end of .text. Linked with -nostdlib: nothing else has lines.

	.text
	.globl	_start
	.type	_start, @function
_start:
	.fill	0x80, 1, 0x90
	.size	_start, 0x80

	.section .debug_line, "", @progbits
	.set	cur_line, 1

	.macro ROW addr, file, line
	.byte	0, 9, 2			# DW_LNE_set_address
	.quad	\addr
	.byte	4			# DW_LNS_set_file
	.uleb128 \file
	.byte	3			# DW_LNS_advance_line
	.sleb128 \line - cur_line
	.set	cur_line, \line
	.byte	1			# DW_LNS_copy
	.endm

	.macro END addr
	.byte	0, 9, 2			# DW_LNE_set_address
	.quad	\addr
	.byte	0, 1, 1			# DW_LNE_end_sequence
	.set	cur_line, 1
	.endm

	.macro NEGATE_STMT
	.byte	6			# DW_LNS_negate_stmt
	.endm

	.macro UNIT_BEGIN n
	.long	.Lunit_end\n - .Lunit_start\n	# unit_length
.Lunit_start\n:
	.short	4				# version
	.long	.Lheader_end\n - .Lheader_start\n	# header_length
.Lheader_start\n:
	.byte	1				# minimum_instruction_length
	.byte	1				# maximum_operations_per_instruction
	.byte	1				# default_is_stmt
	.byte	-5				# line_base
	.byte	14				# line_range
	.byte	13				# opcode_base
	.byte	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1	# standard_opcode_lengths
	.byte	0				# no include_directories
	.asciz	"/lever-test/hand.c"		# file 1
	.byte	0, 0, 0
	.asciz	"/lever-test/other.h"		# file 2
	.byte	0, 0, 0
	.asciz	"/lever-test/sub/../hand.c"	# file 3: file 1 again
	.byte	0, 0, 0
	.byte	0				# end of file_names
.Lheader_end\n:
	.endm

	.macro UNIT_END n
.Lunit_end\n:
	.endm

	UNIT_BEGIN 1
	# A: 10, 11, then the out-of-scope file.
	ROW	_start + 0x00, 1, 10
	ROW	_start + 0x10, 1, 11
	ROW	_start + 0x18, 2, 5
	END	_start + 0x20
	# Discarded code left at address 0 by the linker.
	ROW	0, 1, 99
	END	0x40
	# Several rows at one address, line 0, a non-statement row.
	ROW	_start + 0x30, 3, 30
	ROW	_start + 0x30, 1, 31
	NEGATE_STMT
	ROW	_start + 0x38, 1, 32
	NEGATE_STMT
	ROW	_start + 0x3c, 1, 0
	ROW	_start + 0x40, 1, 32
	ROW	_start + 0x44, 1, 33
	ROW	_start + 0x48, 1, 33
	END	_start + 0x50
	# Runs past the end of .text.
	ROW	_start + 0x70, 1, 40
	END	_start + 0x100
	UNIT_END 1

	# Another unit overlapping the end of A: A starts lower and keeps the
	# overlap, unless its rows there are out of scope.
	UNIT_BEGIN 2
	ROW	_start + 0x1c, 1, 20
	END	_start + 0x30
	UNIT_END 2
