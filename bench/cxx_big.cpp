#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/CodeGen.h"
using namespace llvm;
int main() {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    LLVMContext ctx;
    Module m("demo", ctx);
    IRBuilder<> b(ctx);
    auto *fty = FunctionType::get(b.getInt32Ty(), {b.getInt32Ty()}, false);
    auto *f = Function::Create(fty, Function::ExternalLinkage, "square_plus_one", m);
    b.SetInsertPoint(BasicBlock::Create(ctx, "entry", f));
    Value *x = &*f->arg_begin();
    b.CreateRet(b.CreateAdd(b.CreateMul(x, x), b.getInt32(1)));
    PassBuilder pb;
    LoopAnalysisManager lam; FunctionAnalysisManager fam; CGSCCAnalysisManager cam; ModuleAnalysisManager mam;
    pb.registerModuleAnalyses(mam); pb.registerCGSCCAnalyses(cam); pb.registerFunctionAnalyses(fam); pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2).run(m, mam);
    std::string err;
    auto triple = sys::getDefaultTargetTriple();
    const Target *t = TargetRegistry::lookupTarget(triple, err);
    std::unique_ptr<TargetMachine> tm(t->createTargetMachine(triple, "x86-64", "", TargetOptions(), Reloc::PIC_));
    m.setDataLayout(tm->createDataLayout());
    legacy::PassManager pm;
    SmallString<4096> asmText; raw_svector_ostream os(asmText);
    tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::AssemblyFile);
    pm.run(m);
    outs() << "verified: " << (verifyModule(m, &errs()) ? "no" : "yes") << ", asm bytes > 0: " << (asmText.size() > 0) << "\n";
    return 0;
}
