// regpipe flirt: FSL FLIRT's command line. FLIRT's single-dash words (-in, -omat) are not
// CLI11 options, so the subcommand passes its arguments through untouched to the FLIRT parser.
#include "commands.hpp"

#include <regpipe/host/flirt.hpp>

#include <cstdio>

namespace regpipe::cli {
namespace {

constexpr const char* kUsage = R"(Usage: regpipe flirt -in <inputvol> -ref <refvol> [-out <outputvol>] [-omat <matrix>] [options]
       regpipe flirt -in <inputvol> -ref <refvol> -applyxfm -init <matrix> -out <outputvol>
       regpipe flirt -in <inputvol> -ref <refvol> -applyisoxfm <scale> -init <matrix> -out <outputvol>
FLIRT's options: -init -dof {6,7,9,12} -cost/-searchcost {corratio,mutualinfo,normmi,normcorr,leastsq}
  -bins -searchrx/-searchry/-searchrz <min> <max> -coarsesearch -finesearch -nosearch
  -interp {trilinear,nearestneighbour,sinc,spline} -refweight -inweight
  -datatype {char,short,int,float,double} -usesqform -minsampling <mm> -noresample -v
Output names without an extension take $FSLOUTPUTTYPE's (NIFTI_GZ by default). docs/flirt.md
lists where regpipe differs from FLIRT.
)";

}  // namespace

Command add_flirt(CLI::App& app, CommonOptions& common) {
  app.prefix_command();  // every argument, FLIRT's flags included, goes to remaining()
  app.set_help_flag();   // -h and --help are FLIRT's to read (below)
  return [&app, &common] {
    const std::vector<std::string> args = app.remaining();
    if (args.empty() || args.front() == "-h" || args.front() == "-help" || args.front() == "--help") {
      std::printf("%s", kUsage);
      return args.empty() ? kExitBadInput : kExitOk;
    }
    const FlirtCommand command = parse_flirt_arguments(args);
    PluginHost plugins(search_options(common));
    // FLIRT is silent unless -v; warnings and errors still reach stderr.
    HostServices services(command.verbose ? RP_LOG_INFO : RP_LOG_WARNING, command.verbose);
    services.cancel_on_sigint();
    run_flirt(command, plugins, services);
    return kExitOk;
  };
}

}  // namespace regpipe::cli
