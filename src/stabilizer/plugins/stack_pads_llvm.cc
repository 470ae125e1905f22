// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * lever-stack-pads-llvm: clang pass plugin (new pass manager) for `lever cc`
 * (clang -fpass-plugin=...): Stabilizer's stack padding, spec stabilizer.md
 * 3.3 T-S as option C of 12.3. The same transformation as the GCC plugin
 * (stack_pads_gcc.cc), which has the longer explanation:
 *
 *     %pad  = load i8, @__lever_stack_pads[i]   ; this function's slot
 *     %size = zext %pad to i64, shl 4
 *     %area = alloca i8, i64 %size, align 16    ; the callees' frames move down
 *     call void asm sideeffect "", "r"(%area)   ; keeps the alloca
 *
 * at the entry of every defined function, after the optimization pipeline
 * (so inlining sees the original code). __lever_stack_pads is an internal
 * [N x i8] zero array in section "lever_stack_pads", one byte per function.
 */
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include "stabilizer/runtime/stack_pads.h"

#include <vector>

using namespace llvm;

namespace
{

bool has_musttail_call(const Function &fn)
{
	for (const BasicBlock &bb : fn)
		if (bb.getTerminatingMustTailCall())
			return true;
	return false;
}

bool wants_pad(const Function &fn)
{
	if (fn.isDeclaration() || fn.hasFnAttribute(Attribute::Naked))
		return false;
	/* A musttail call must reuse this frame exactly as it came in. */
	return !has_musttail_call(fn);
}

/* After the static allocas at the top of the entry block, so they stay static. */
Instruction *pad_insertion_point(Function &fn)
{
	BasicBlock::iterator it = fn.getEntryBlock().getFirstInsertionPt();
	while (isa<AllocaInst>(*it) && cast<AllocaInst>(*it).isStaticAlloca())
		++it;
	return &*it;
}

void insert_pad(Function &fn, GlobalVariable *table, unsigned slot)
{
	IRBuilder<> b(pad_insertion_point(fn));
	LLVMContext &ctx = fn.getContext();
	Type *i8 = Type::getInt8Ty(ctx);
	Type *i64 = Type::getInt64Ty(ctx);

	Value *addr = b.CreateConstInBoundsGEP2_64(table->getValueType(), table, 0, slot);
	Value *pad = b.CreateLoad(i8, addr, "lever.pad");
	Value *size = b.CreateShl(b.CreateZExt(pad, i64), STACK_PAD_UNIT_SHIFT, "lever.pad.bytes");
	AllocaInst *area = b.CreateAlloca(i8, size, "lever.pad.area");
	area->setAlignment(Align(16));

	FunctionType *keep_type = FunctionType::get(Type::getVoidTy(ctx), {area->getType()}, false);
	b.CreateCall(InlineAsm::get(keep_type, "", "r", /*hasSideEffects=*/true), {area});
}

struct StackPadPass : PassInfoMixin<StackPadPass> {
	PreservedAnalyses run(Module &mod, ModuleAnalysisManager &)
	{
		std::vector<Function *> fns;
		for (Function &fn : mod)
			if (wants_pad(fn))
				fns.push_back(&fn);
		if (fns.empty())
			return PreservedAnalyses::all();

		ArrayType *type = ArrayType::get(Type::getInt8Ty(mod.getContext()), fns.size());
		auto *table = new GlobalVariable(mod, type, false, GlobalValue::InternalLinkage,
						 Constant::getNullValue(type), STACK_PADS_SYMBOL);
		table->setSection(STACK_PADS_SECTION);
		table->setAlignment(Align(1));
		appendToCompilerUsed(mod, {table});

		for (unsigned i = 0; i < fns.size(); i++)
			insert_pad(*fns[i], table, i);
		return PreservedAnalyses::none();
	}
	/* Also at -O0, where functions are optnone. */
	static bool isRequired()
	{
		return true;
	}
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return {LLVM_PLUGIN_API_VERSION, "lever-stack-pads", "1", [](PassBuilder &pb) {
			pb.registerOptimizerLastEPCallback(
			    [](ModulePassManager &mpm, OptimizationLevel) {
				    mpm.addPass(StackPadPass());
			    });
		}};
}
