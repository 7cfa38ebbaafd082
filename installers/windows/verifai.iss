; Inno Setup 6 script: a Windows installer for the PyInstaller bundle of VerifAI Desktop.
;
; Build the bundle first (installers/verifai.spec, see installers/README.md), then from the
; repository root:
;   iscc /DAppVersion=0.1.0 installers\windows\verifai.iss
; Output: dist\installers\verifai-desktop-<version>-windows-x64-setup.exe
;
; Installs per user by default (no administrator rights; the setup offers all users too),
; adds Start menu and optional desktop shortcuts, and optionally puts the `verifai` command on
; the user's PATH. User data (collections, settings, models) lives outside the install folder
; and is kept on uninstall.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef BundleDir
  #define BundleDir "..\..\dist\installers\pyinstaller\verifai-desktop"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist\installers"
#endif

[Setup]
; AppId identifies the product for upgrades and uninstall: never change it.
AppId={{6C1E5B0A-4F7D-4C8E-9A1B-2D3E4F5A6B7C}
AppName=VerifAI Desktop
AppVersion={#AppVersion}
AppPublisher=VerifAI Desktop developers
DefaultDirName={autopf}\VerifAI Desktop
DefaultGroupName=VerifAI Desktop
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
ChangesEnvironment=yes
OutputDir={#OutputDir}
OutputBaseFilename=verifai-desktop-{#AppVersion}-windows-x64-setup
SetupIconFile=..\icons\verifai-desktop.ico
UninstallDisplayIcon={app}\verifai-desktop.exe
; Most of the bundle is the quantised GGUF, which does not compress: fast LZMA2, not solid.
Compression=lzma2/fast
SolidCompression=no
WizardStyle=modern

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the verifai command to PATH"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\VerifAI Desktop"; Filename: "{app}\verifai-desktop.exe"
Name: "{autodesktop}\VerifAI Desktop"; Filename: "{app}\verifai-desktop.exe"; Tasks: desktopicon

[Registry]
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NotOnPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\verifai-desktop.exe"; Description: "{cm:LaunchProgram,VerifAI Desktop}"; Flags: nowait postinstall skipifsilent

[Code]
{ True when Dir is not yet an entry of the user's PATH (so a reinstall does not add it twice). }
function NotOnPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Path) then
    Path := '';
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;
